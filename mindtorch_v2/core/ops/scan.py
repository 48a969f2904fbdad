"""placeholder: scan family (being written)"""
__all__ = []
