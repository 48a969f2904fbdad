"""placeholder: math_ops (being written)"""
__all__ = []
