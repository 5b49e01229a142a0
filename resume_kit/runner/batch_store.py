"""Many checkpoints from one process: the progress transaction ``resume-kit run`` uses.

It has the contract of :func:`resume_kit.progress_file.io.transaction` (same lock file, same
rendering through :meth:`ProgressDoc.render_fast`, which re-renders only the changed units and
proves them by parsing them back, same atomic replace) and differs in three ways that matter
when one process writes a checkpoint per unit, hundreds of times:

* The loaded document is kept between checkpoints. Under the lock the file is read again
  every time; only when its text is not exactly what this store last read or wrote (another
  command changed it) is it loaded and validated again.
* ``history/`` gets the version being replaced unless that version is the one this store
  itself wrote at its previous checkpoint. Those intermediate versions are each a subset of
  the next; copying them all would push the version the person had before the run out of the
  ring of 20 within twenty units. The model cache in ``cache/`` is not rewritten per
  checkpoint either (the next command that loads the file rebuilds it). Both cost fsyncs,
  which are most of a checkpoint's time.
* Threads of one process are serialised by a ``threading.Lock`` taken before the lock file,
  so workers never spin on the lock file against each other; and ``on_write`` tells the
  caller, in the writing thread, which units a checkpoint changes just before the write, so
  ``run`` learns a unit's outcome while its checkpoint is still being written.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from resume_kit.infra.paths import Layout
from resume_kit.infra.store import FileLock, atomic_write, ensure_gitignore, keep_history
from resume_kit.model.progress import Progress, Unit
from resume_kit.progress_file import io as progress_io
from resume_kit.progress_file.io import ProgressDoc
from resume_kit.progress_file.roundtrip import to_data


class BatchStore:
    """A progress transaction for many checkpoints in one process (see the module notes)."""

    def __init__(self, layout: Layout, on_write: Callable[[list[Unit]], None] | None = None):
        self.layout = layout
        self.on_write = on_write
        self._lock = threading.Lock()
        self._doc: ProgressDoc | None = None
        self._written: str | None = None  # the text of this store's last write
        self.writes = 0
        self.loads = 0

    # ---- reading

    def _current(self) -> ProgressDoc:
        """The document as the file stands (call with ``self._lock`` held)."""
        text = progress_io.read_text(self.layout.progress)
        if self._doc is not None and text == self._doc.text:
            return self._doc
        self._doc = progress_io.load(self.layout)
        self.loads += 1
        return self._doc

    @contextlib.contextmanager
    def view(self) -> Iterator[Progress]:
        """The progress as the file stands now, to read only. While another thread is writing a
        checkpoint, the model in memory instead (never waiting): at most that checkpoint
        behind, and a change made by another command is seen at the next view."""
        if self._lock.acquire(blocking=False):
            try:
                yield self._current().progress
            finally:
                self._lock.release()
            return
        doc = self._doc
        if doc is not None:
            yield doc.progress
            return
        with self._lock:
            yield self._current().progress

    # ---- writing

    @contextlib.contextmanager
    def transaction(self, layout: Layout | None = None) -> Iterator[ProgressDoc]:
        """Like :func:`resume_kit.progress_file.io.transaction` (``layout`` is ignored: the store is
        bound to its own)."""
        with self._lock, FileLock(self.layout.progress):
            doc = self._current()
            try:
                yield doc
                self._save(doc)
            except BaseException:
                self._doc = None  # the model may be half changed: load again next time
                raise

    def _save(self, doc: ProgressDoc) -> None:
        new_data = to_data(doc.progress)
        if new_data == doc.data:
            return
        if self.on_write is not None:
            before = {row["id"]: row for row in doc.data.get("units", [])}
            changed = [
                unit
                for unit, row in zip(doc.progress.units, new_data["units"], strict=True)
                if before.get(unit.id) != row
            ]
            self.on_write(changed)
        text = doc.render_fast()
        if doc.text != self._written:
            ensure_gitignore(self.layout)
            keep_history(doc.path, self.layout.history)
        atomic_write(doc.path, text)
        doc.text, doc.data, doc._raw, doc._bytes = text, new_data, None, None
        self._written = text
        self.writes += 1
