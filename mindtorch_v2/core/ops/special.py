"""placeholder: special family (being written)"""
__all__ = []
