"""placeholder: complex family (being written)"""
__all__ = []
