"""placeholder: reductions (being written)"""
__all__ = []
