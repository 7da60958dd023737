"""select: per sample, the augmentation a batch of indices names, by splitting the batch with
conditionals (a binary search over the list: ceil(log2(n)) levels of `if`)."""

from typing import List

from stoker import conditionals
from stoker.auto_aug.core._augmentation import Augmentation
from stoker.node import DataNode as _DataNode


def _check_conditionals(index):
    if isinstance(index, _DataNode) and index._pipeline._conditions is None:
        raise TypeError(
            f"{index.name}: the automatic augmentations choose the augmentation per sample with "
            f"conditionals; define the pipeline with `pipeline_def(enable_conditionals=True)` "
            f"(as DALI requires)")


def split_samples_among_ops(op_range_lo: int, op_range_hi: int, ops: List[Augmentation],
                            selected_op_idx: _DataNode, op_args, op_kwargs):
    """ops[selected_op_idx](*op_args, **op_kwargs) for the indices in [lo, hi]."""
    assert op_range_lo <= op_range_hi
    if op_range_lo == op_range_hi:
        return ops[op_range_lo](*op_args, **op_kwargs)
    mid = (op_range_lo + op_range_hi) // 2
    return conditionals.if_exp(
        selected_op_idx <= mid,
        lambda: split_samples_among_ops(op_range_lo, mid, ops, selected_op_idx, op_args,
                                        op_kwargs),
        lambda: split_samples_among_ops(mid + 1, op_range_hi, ops, selected_op_idx, op_args,
                                        op_kwargs))


def select(ops: List[Augmentation], selected_op_idx: _DataNode, *op_args, **op_kwargs):
    """Per sample, `ops[selected_op_idx](*op_args, **op_kwargs)`: `selected_op_idx` is a batch
    of indices in [0, len(ops) - 1]; pipeline values among the arguments are split with the
    batch. Needs a pipeline with enable_conditionals=True."""
    if len(ops) > 1:
        _check_conditionals(selected_op_idx)
    return split_samples_among_ops(0, len(ops) - 1, ops, selected_op_idx, op_args, op_kwargs)
