"""placeholder: search family (being written)"""
__all__ = []
