"""DataLoader and the default collate functions.

With `num_workers > 0` batches are fetched and collated in worker processes
(multiprocessing, the default start method unless `multiprocessing_context`
says otherwise) and come back in sampler order (`in_order=False` is accepted
and also gives them in order). `persistent_workers=True` is accepted; workers
are started anew for every pass all the same. `timeout` (seconds, with workers) bounds the wait
for each batch: RuntimeError "DataLoader timed out after N seconds" as in torch. `pin_memory` is
accepted (no accelerator memory to pin).
"""
import collections.abc
import copy
import itertools
import math
import multiprocessing
import queue
import re

import numpy as np

from ...eager import creation as _creation
from ...eager import ops as _ops
from ...eager.tensor import Tensor
from .dataset import IterableDataset, Subset, TensorDataset
from ._worker import ExceptionWrapper, _IterableEnd, get_worker_info, worker_loop
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _draw_seed

_NP_STR_OBJ = re.compile(r"[SaUO]")
_COLLATE_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_CONVERT_ERR = "default_convert: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy(x):
    return type(x).__module__ == "numpy" and not isinstance(x, (np.str_, np.bytes_))


def default_convert(data):
    """numpy arrays and scalars inside `data` become tensors; containers are rebuilt; the rest is unchanged."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if isinstance(data, np.ndarray) and _NP_STR_OBJ.search(data.dtype.str) is not None:
            return data
        return _creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            clone = copy.copy(data)
            clone.update({key: default_convert(data[key]) for key in data})
            return clone
        except (TypeError, AttributeError):
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # torch keeps this for backwards compatibility
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            clone = copy.copy(data)
            for i, d in enumerate(data):
                clone[i] = default_convert(d)
            return clone
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """A list of samples as one batch: tensors stacked on a new dim 0, numbers as tensors, containers transposed.

    Python floats give float64 tensors and ints int64 (bools bool), strings stay a list,
    tuples and lists of fields give a list of collated fields, dicts and namedtuples keep their type.
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _ops.stack(batch, 0)
    if _is_numpy(elem):
        if isinstance(elem, np.ndarray):
            if _NP_STR_OBJ.search(elem.dtype.str) is not None:
                raise TypeError(_COLLATE_ERR.format(elem.dtype))
            return default_collate([_creation.as_tensor(b) for b in batch])
        if elem.shape == ():  # numpy scalars
            return _creation.as_tensor(np.asarray(batch))
        raise TypeError(_COLLATE_ERR.format(type(elem)))
    if isinstance(elem, float):
        return _creation.tensor(batch, dtype="float64")
    if isinstance(elem, int):
        return _creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            clone = copy.copy(elem)
            clone.update({key: default_collate([d[key] for d in batch]) for key in elem})
            return clone
        except (TypeError, AttributeError):
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]  # torch: tuples give lists
        try:
            clone = copy.copy(elem)
            for i, samples in enumerate(transposed):
                clone[i] = default_collate(samples)
            return clone
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERR.format(type(elem)))


class _InfiniteConstantSampler(Sampler):
    """The index sampler of an IterableDataset: None forever."""

    def __iter__(self):
        while True:
            yield None


_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader:
    """Batches of a dataset: sampler -> batch of indices -> samples -> collate_fn."""

    _initialized = False

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        """A start method name or a multiprocessing context, only with worker processes (as torch checks)."""
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True

    def __setattr__(self, attr, val):
        if self._initialized and attr in _FROZEN:
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers > 0:
            return _MultiProcessingDataLoaderIter(self)
        return _DataLoaderIter(self)

    def __len__(self):
        if self._is_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


class _DataLoaderIter:
    """One pass over a DataLoader."""

    def __init__(self, loader):
        self._loader = loader
        self._auto = loader._auto_collation
        self._collate = loader.collate_fn
        self._dataset = loader.dataset
        self._drop_last = loader.drop_last
        self._sampler_iter = iter(loader._index_sampler)
        # torch draws a base seed for its workers from the loader's generator on every pass;
        # drawing it too keeps the generator's stream in step with a torch script's
        self._base_seed = _draw_seed(loader.generator)
        self._dataset_iter = iter(self._dataset) if loader._is_iterable else None
        self._num_yielded = 0
        self._gather = self._auto and self._collate is default_collate and _tensor_dataset_root(self._dataset)

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def __next__(self):
        index = next(self._sampler_iter)
        if self._gather:
            batch = _gather(self._dataset, index)
            if batch is not None:
                self._num_yielded += 1
                return batch
        data = self._fetch_iterable(index) if self._dataset_iter is not None else self._fetch_map(index)
        self._num_yielded += 1
        return self._collate(data)

    def _fetch_map(self, index):
        if not self._auto:
            return self._dataset[index]
        getitems = getattr(self._dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(index)
        return [self._dataset[i] for i in index]

    def _fetch_iterable(self, index):
        if not self._auto:
            return next(self._dataset_iter)
        data = []
        for _ in index:
            try:
                data.append(next(self._dataset_iter))
            except StopIteration:
                break
        if not data or (self._drop_last and len(data) < len(index)):
            raise StopIteration
        return data


def _tensor_dataset_root(dataset):
    """Whether `dataset` is a TensorDataset, possibly under Subsets (exact types: no overridden __getitem__)."""
    while type(dataset) is Subset:
        dataset = dataset.dataset
    return type(dataset) is TensorDataset


def _gather(dataset, index):
    """default_collate([dataset[i] for i in index]) as one indexing per tensor (None if an index is not an int).

    Stacking a batch of row views costs two ops per sample; `t[index]` gives the
    same values, dtype and autograd history in one op.
    """
    if not all(type(i) is int for i in index):
        return None
    while type(dataset) is Subset:
        indices = dataset.indices
        index = [indices[i] for i in index]
        if not all(type(i) is int for i in index):
            return None
        dataset = dataset.dataset
    return [t[index] for t in dataset.tensors]


class _Fetcher:
    """What a worker does per task: fetch the samples of one index batch and collate them (picklable)."""

    def __init__(self, loader):
        self.auto = loader._auto_collation
        self.collate = loader.collate_fn
        self.drop_last = loader.drop_last
        self.iterable = loader._is_iterable

    def start(self, dataset):
        return iter(dataset) if self.iterable else dataset

    def __call__(self, state, index):
        if self.iterable:
            if not self.auto:
                return self.collate(next(state))
            data = list(itertools.islice(state, len(index)))
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
            return self.collate(data)
        if not self.auto:
            return self.collate(state[index])
        getitems = getattr(state, "__getitems__", None)
        return self.collate(getitems(index) if callable(getitems) else [state[i] for i in index])


class _MultiProcessingDataLoaderIter:
    """One pass over a DataLoader with worker processes; batches come back in task (sampler) order.

    Up to `prefetch_factor` tasks per worker are outstanding; task i goes to the next worker still
    active, round robin. Results arriving early wait in `_reorder` until their turn."""

    def __init__(self, loader):
        self._loader = loader
        self._sampler_iter = iter(loader._index_sampler)
        self._base_seed = _draw_seed(loader.generator)
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._timeout = loader.timeout
        self._num_workers = loader.num_workers
        self._result_queue = context.Queue()
        self._index_queues = []
        self._workers = []
        fetch = _Fetcher(loader)
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            w = context.Process(target=worker_loop, daemon=True,
                                args=(fetch, loader.dataset, index_queue, self._result_queue, worker_id,
                                      self._num_workers, self._base_seed + worker_id, loader.worker_init_fn))
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._active = [True] * self._num_workers
        self._next_worker = itertools.cycle(range(self._num_workers))
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_worker = {}  # task index -> worker, for tasks sent and not yet yielded
        self._reorder = {}
        self._num_yielded = 0
        self._shutdown = False
        for _ in range(loader.prefetch_factor * self._num_workers):
            self._try_put_index()

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._next_worker)
            if self._active[worker_id]:
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_worker[self._send_idx] = worker_id
        self._send_idx += 1

    def _get_result(self):
        while True:
            try:
                return self._result_queue.get(timeout=self._timeout if self._timeout > 0 else 5.0)
            except queue.Empty:
                if self._timeout > 0:
                    self._shutdown_workers(wait=0.1)
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) exited "
                                       "unexpectedly") from None

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx and self._rcvd_idx not in self._task_worker:
                self._rcvd_idx += 1  # a task that went to a worker whose iterable had ended
            if self._rcvd_idx >= self._send_idx:
                self._shutdown_workers()
                raise StopIteration
            if self._rcvd_idx in self._reorder:
                data = self._reorder.pop(self._rcvd_idx)
                del self._task_worker[self._rcvd_idx]
                self._rcvd_idx += 1
                self._try_put_index()
                if isinstance(data, ExceptionWrapper):
                    self._shutdown_workers()
                    data.reraise()
                self._num_yielded += 1
                return data
            if self._shutdown:
                raise StopIteration
            idx, data = self._get_result()
            if isinstance(data, _IterableEnd):
                self._active[data.worker_id] = False
                del self._task_worker[idx]  # its other outstanding tasks answer the same
                self._try_put_index()
                continue
            self._reorder[idx] = data

    def _shutdown_workers(self, wait=5.0):
        """Ask the workers to stop; terminate any still running after `wait` seconds (a worker stuck past
        the loader's timeout is not waited for)."""
        if self._shutdown:
            return
        self._shutdown = True
        for q in self._index_queues:
            q.put(None)
        for w in self._workers:
            w.join(timeout=wait)
            if w.is_alive():
                w.terminate()
        for q in self._index_queues:
            q.close()
        self._result_queue.close()

    def __del__(self):
        if not getattr(self, "_shutdown", True):
            self._shutdown_workers()
