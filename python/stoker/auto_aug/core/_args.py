"""Which extra keyword arguments an augmentation's function takes (beyond its two positional
ones, the samples and the parameter), and the errors for those missing or never used."""

import inspect

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_POSITIONAL = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY)


class MissingArgException(Exception):
    """An augmentation was called without an argument its function requires (e.g. `shape` for
    translate_x with relative offsets)."""

    def __init__(self, message, augmentation, missing_args):
        super().__init__(message)
        self.augmentation = augmentation
        self.missing_args = missing_args


class UnusedArgException(Exception):
    """Keyword arguments given to apply_* that no augmentation of the suite takes."""

    def __init__(self, message, unused_args):
        super().__init__(message)
        self.unused_args = unused_args


def _params_after(fun, skip_positional):
    """The parameters of `fun` but its first `skip_positional` positional ones."""
    out = []
    for k, (name, param) in enumerate(inspect.signature(fun).parameters.items()):
        if k < skip_positional and param.kind in _POSITIONAL:
            continue
        out.append((name, param))
    return out


def filter_extra_accepted_kwargs(fun, kwargs, skip_positional=0):
    """The entries of `kwargs` that `fun` takes by name (after `skip_positional` arguments)."""
    names = {name for name, p in _params_after(fun, skip_positional) if p.kind in _NAMED}
    return {name: value for name, value in kwargs.items() if name in names}


def get_required_kwargs(fun, skip_positional=0):
    """The names `fun` takes without a default (after `skip_positional` arguments)."""
    return [name for name, p in _params_after(fun, skip_positional)
            if p.kind in _NAMED and p.default is inspect.Parameter.empty]


def get_num_positional_args(fun):
    """How many arguments `fun` takes positionally."""
    return sum(1 for p in inspect.signature(fun).parameters.values() if p.kind in _POSITIONAL)


def get_missing_kwargs(fun, kwargs, skip_positional=0):
    return [name for name in get_required_kwargs(fun, skip_positional) if name not in kwargs]


def filter_unused_args(augmentations, kwargs):
    """The names in `kwargs` that none of `augmentations` takes."""
    used = set()
    for aug in augmentations:
        used.update(filter_extra_accepted_kwargs(aug.op, kwargs, 2))
    return [name for name in kwargs if name not in used]


def forbid_unused_kwargs(augmentations, kwargs, call_name):
    unused = filter_unused_args(augmentations, kwargs)
    if not unused:
        return
    subject, verb = ("kwarg", "is") if len(unused) == 1 else ("kwargs", "are")
    raise UnusedArgException(
        f"The {call_name} got unexpected {subject}. The {subject} `{', '.join(unused)}` "
        f"{verb} not used by any of the augmentations.", unused_args=unused)


def check_num_magnitude_bins(num_magnitude_bins):
    if not isinstance(num_magnitude_bins, int) or num_magnitude_bins < 1:
        raise Exception(
            f"The `num_magnitude_bins` must be a positive integer, got {num_magnitude_bins}.")
