"""torch.optim: optimizers updating parameters in place, and learning-rate schedulers."""
from . import lr_scheduler
from .adadelta import Adadelta, Adamax
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .nadam import NAdam, RAdam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop import ASGD, Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "LBFGS", "lr_scheduler"]
