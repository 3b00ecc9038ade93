"""Finished runs kept as one compressed blob each until the report needs them.

A log of weeks holds hundreds of server runs. What the report needs of a finished run
(facts, matches, exclusions, statistics, command line) is many small objects; kept as
they are, they pin the allocator's small-object arenas all over the heap, and memory
grows with the length of the log. Packed, a run costs one allocation of a few KB. The
knowledge the run points into (signatures, fact definitions) is not copied: it is
pickled by reference and restored to the very same objects.
"""

from __future__ import annotations

import io
import pickle
import zlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llamadiag.engine.run import Run
    from llamadiag.knowledge.loader import Knowledge

PACKED = ("facts", "hits", "excluded", "stats", "cmdline")


class RunPacker:
    """Packs an ended run's state into compressed bytes, and back; knowledge objects go by reference."""

    def __init__(self, knowledge: Knowledge, shared: list[Any]) -> None:
        # objects of the knowledge a run refers to, by a stable key
        self.objects: dict[Any, Any] = {}
        for rule_i, loaded in enumerate(knowledge.rules):
            for sig_i, sig in enumerate(loaded.rule.signatures):
                self.objects[("sig", rule_i, sig_i)] = sig
        for i, obj in enumerate(shared):
            self.objects[("shared", i)] = obj
        self.keys = {id(obj): key for key, obj in self.objects.items()}

    def pack(self, run: Run) -> None:
        """Replace the run's state by its compressed pickle (nothing to do when already packed)."""
        if run.packed is not None:
            return
        state = {name: getattr(run, name) for name in PACKED}
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        pickler.persistent_id = lambda obj: self.keys.get(id(obj))  # type: ignore[method-assign]  # pickle's hook
        pickler.dump(state)
        run.packed = zlib.compress(buffer.getvalue(), 1)
        for name in PACKED:
            setattr(run, name, None)

    def unpack(self, run: Run) -> None:
        """Restore the run's state from its compressed pickle (nothing to do when not packed)."""
        if run.packed is None:
            return
        unpickler = pickle.Unpickler(io.BytesIO(zlib.decompress(run.packed)))
        unpickler.persistent_load = self.objects.__getitem__  # type: ignore[method-assign]  # pickle's hook
        for name, value in unpickler.load().items():
            setattr(run, name, value)
        run.packed = None
