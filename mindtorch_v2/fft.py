"""torch.fft (being written)"""
