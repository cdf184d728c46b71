"""Taking what the scan read of one folder (``core.scan``): each file's letter, unreadable
or unsupported entry, in listing order, what the header cache keeps of it, and the stat
the scan saw of it (``SeenFolder``). A reader that made letters itself may give them a
batch at a time (``Reader.iter_batches``): such a batch is taken whole."""

from __future__ import annotations

import errno
import os
from array import array

from .header import HeaderResult, parse_header
from .letters import build
from .model import Letter, Unreadable, Unsupported
from .reader import kind_of_mode as _kind_mode
from .reader import why as _why
from .reader import why_errno as _why_errno


def take_folder(scan, job, letters, unreadable, unsupported, orphans) -> int:
    """Add what the folder ``job`` found when listed, then every item of it in listing
    order, reading the files not taken from the cache; closes the folder. Returns how
    many files count (those that vanished since the listing are not examined, not
    counted)."""
    unsupported.extend(job.unsupported)
    orphans.extend(job.orphans)
    seat, folder = job.seat, job.folder
    seen = job.seen
    cache = scan.cache
    # what is read goes to the cache a folder at a time; the letters the reader made
    # come with their header's content hash, not its bytes (``hashes``: the digests, 16
    # bytes each, in the order of ``made``, in parts)
    new_items: list[Letter | Unreadable] = []
    new_data: list[bytes] = []
    new_ctimes: list[int] = []
    made: list[Letter] = []
    hashes: list[bytes] = []
    made_ctimes: list[int] = []
    id_utc = scan.id_time_is_utc
    prefix = f"{seat}/{folder}/"
    add_letter = letters.append
    add_unreadable = unreadable.append
    files = job.files
    recheck = job.recheck
    reuse = getattr(cache, "reuse", None)

    def take(name: str, result: tuple) -> None:
        """One file read: its letter, unreadable or unsupported entry."""
        nonlocal files
        stage, err, mode, size, mtime_ns, inode, ctime_ns, data, fields = result
        if type(fields) is Letter:  # made by the reader, as build() would; data: its hash
            add_letter(fields)
            made.append(fields)
            hashes.append(data)
            made_ctimes.append(ctime_ns)
            seen.add(name, (size, mtime_ns, inode, ctime_ns))
            return
        if recheck and not stage and data is not None and name in recheck:
            item = reuse(prefix + name, data, size, mtime_ns, inode, ctime_ns)
            if item is not None:  # the same header bytes: the row kept, its stat refreshed
                seen.add(name, (size, mtime_ns, inode, ctime_ns))
                (add_letter if type(item) is Letter else add_unreadable)(item)
                return
        if stage:
            if stage == 1 and err == errno.ENOENT:
                scan.changed = True
                files -= 1
            else:
                unsupported.append(Unsupported(prefix + name, _why_errno(err)))
            return
        if data is None:
            unsupported.append(Unsupported(prefix + name, _kind_mode(mode)))
            return
        item = build(
            HeaderResult(fields) if fields is not None else parse_header(data),
            path=prefix + name, seat=seat, folder=folder, name=name,
            size=size, mtime_ns=mtime_ns, inode=inode, id_time_is_utc=id_utc,
        )
        new_items.append(item)
        new_data.append(data)
        new_ctimes.append(ctime_ns)
        seen.add(name, (size, mtime_ns, inode, ctime_ns))
        (add_letter if type(item) is Letter else add_unreadable)(item)

    try:
        if job.batches is not None:  # every file read, a batch at a time (``Reader.iter_batches``)
            _take_batches(job, take, letters, made, hashes, made_ctimes)
        else:
            read = job.read
            for entry in job.order:
                if type(entry) is not str:
                    (add_letter if type(entry) is Letter else add_unreadable)(entry)
                else:
                    take(entry, next(read))
    except OSError as exc:
        unsupported.append(Unsupported(f"{seat}/{folder}", _why(exc)))
    finally:
        os.close(job.dir_fd)
    if cache is not None:
        if new_items:
            cache.put_many(new_items, new_data, new_ctimes)
        if made:
            put_hashed = getattr(cache, "put_hashed", None)
            if put_hashed is not None:
                put_hashed(made, b"".join(hashes), made_ctimes)
            else:
                cache.put_many(made, [None] * len(made), made_ctimes)
    return files

def _take_batches(job, take, letters, made, hashes, made_ctimes) -> None:
    """The folder's results a batch at a time: a batch of letters the reader made is
    taken whole (their hashes and stats came packed); any other result one by one."""
    seen = job.seen
    for names, results, packed_hashes, packed_stats in job.batches:
        count = len(packed_hashes) // 16
        stats = array("q")
        stats.frombytes(packed_stats)
        if count == len(results):  # every one a letter made by the reader
            letters.extend(results)
            made.extend(results)
            seen.extend(names, stats)
            hashes.append(packed_hashes)
            made_ctimes.extend(stats[3::4])
            continue
        k = 0
        for name, r in zip(names, results):
            if type(r) is tuple:
                take(name, r)
                continue
            letters.append(r)
            made.append(r)
            seen.extend((name,), stats[4 * k : 4 * k + 4])
            hashes.append(packed_hashes[16 * k : 16 * k + 16])
            made_ctimes.append(stats[4 * k + 3])
            k += 1
