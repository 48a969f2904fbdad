"""placeholder: complex_ops (being written)"""
__all__ = []
