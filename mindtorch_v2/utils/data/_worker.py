"""DataLoader worker processes: the loop each worker runs, and what `get_worker_info()` returns inside one.

A worker takes (task index, batch of indices) from its own index queue, fetches and collates the batch,
and puts (task index, batch) on the shared result queue; the main process puts results back in task
order. A worker of an IterableDataset iterates its own copy of the dataset (shard it with
`get_worker_info()`); when that copy is exhausted it answers `_IterableEnd` and gets no more tasks.
"""
import random
import sys
import traceback

from ...eager import random_ops as _random_ops


class WorkerInfo:
    """id, num_workers, seed and dataset (the worker's copy) of the current worker process."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


_worker_info = None


def get_worker_info():
    """The WorkerInfo of this DataLoader worker process; None in the main process."""
    return _worker_info


class _IterableEnd:
    """A worker's answer once its copy of an IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback as text."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:  # KeyError shows its message with repr: keep it readable
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type whose constructor needs more than a message
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    def __repr__(self):
        return self


def worker_loop(fetch, dataset, index_queue, result_queue, worker_id, num_workers, seed, worker_init_fn):
    """Run in a worker process until the index queue gives None: fetch(dataset_iter, index) per task."""
    global _worker_info
    random.seed(seed)
    _random_ops.manual_seed(seed)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    where = f"in DataLoader worker process {worker_id}"
    init_error = None
    try:
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
        state = fetch.start(dataset)
    except Exception:
        init_error = ExceptionWrapper(sys.exc_info(), where)
    ended = False
    while True:
        task = index_queue.get()
        if task is None:
            break
        idx, index = task
        if init_error is not None:
            result, init_error = init_error, None
            ended = True
        elif ended:
            result = _IterableEnd(worker_id)
        else:
            try:
                result = fetch(state, index)
            except StopIteration:
                result = _IterableEnd(worker_id)
                ended = True
            except Exception:
                result = ExceptionWrapper(sys.exc_info(), where)
        result_queue.put((idx, result))
        del result
    result_queue.cancel_join_thread()
