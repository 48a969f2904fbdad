"""torch._dynamo.exc: the errors torch.compile raises."""

__all__ = ["TorchDynamoException", "Unsupported", "BackendCompilerFailed", "InternalTorchDynamoError"]


class TorchDynamoException(RuntimeError):
    """Base of torch.compile's errors."""


class Unsupported(TorchDynamoException):
    """Code torch.compile cannot trace into one graph (a graph break), raised under fullgraph=True."""


class BackendCompilerFailed(TorchDynamoException):
    """A backend failed to compile a traced graph."""


class InternalTorchDynamoError(TorchDynamoException):
    """An error of the compiler itself."""
