"""torch.return_types: the named tuples ops return (values and indices of max, the factors of a
decomposition), each printed as torch prints it and pickled by name."""
import collections

__all__ = []  # reached as torch.return_types.<name>, not re-exported at the top level


def structseq(name, fields=("values", "indices")):
    """A torch.return_types.<name> look-alike: a named tuple of `fields`."""
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"
    return type(name, (base,), {"__slots__": (), "__module__": __name__, "__repr__": __repr__})


max = structseq("max")  # noqa: A001
min = structseq("min")  # noqa: A001
sort = structseq("sort")
topk = structseq("topk")
cummax = structseq("cummax")
cummin = structseq("cummin")
median = structseq("median")
nanmedian = structseq("nanmedian")
kthvalue = structseq("kthvalue")
mode = structseq("mode")
aminmax = structseq("aminmax", ("min", "max"))
