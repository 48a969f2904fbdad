"""placeholder: statistics family (being written)"""
__all__ = []
