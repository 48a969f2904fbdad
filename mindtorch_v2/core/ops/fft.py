"""placeholder: fft family (being written)"""
__all__ = []
