"""What the letter pane shows, as ``Content`` built from the model: the head (headers and
answers), the thread tree, the supersession chain, provenance and a finding's details.

Pure functions of the model and a letter: no widget, no file read (the pane reads files in
workers and hands the results in). Every string from a letter goes through ``sanitize``.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content

from letterbox_tui.core.check import Finding
from letterbox_tui.core.model import Letter, Reason, Unreadable
from letterbox_tui.core.times import full

from ..model import AppModel, answer_text, reason_lines, short_time
from ..sanitize import clean, cleans

#: Thread and chain trees stop after this many letters; deeper levels share one margin.
MAX_TREE_LINES = 400
MAX_DEPTH_SHOWN = 12


def finding_lines(model: AppModel, item: Finding) -> list[Content]:
    lines: list[Content] = []
    if True:
        lines.append(cleans(Content.styled(f"{item.severity.upper()}: ", "bold $error" if item.severity == "problem" else "bold $warning"), Content.styled(item.code, "bold")))
        lines.append(clean(item.detail))
        for p in item.paths:
            lines.append(cleans(Content.styled("  file: ", "$text-muted"), (p, "")))
            u = next((u for u in model.snapshot.unreadable if u.path == p), None)
            if u is not None:
                lines.extend(_unreadable_lines(u))
        for i in item.letters:
            lines.append(cleans(Content.styled("  letter: ", "$text-muted"), (i, "")))
        if item.code in SCOPE_HELP:
            lines += [Content(""), Content.styled(SCOPE_HELP[item.code], "$text-muted")]
    return lines


#: what a finding that makes the scope incomplete does to the answers, and what ends it
#: (the banner's "Press p for Problems" leads here: the detail alone said neither)
SCOPE_HELP = {
    "unsupported-entry": "Never read, it may be anything: a reply to any letter, a newer version of any "
                         "decision. So every answer it may bear on is unknown, and absence is no proof. "
                         "To complete the scope, move its letters into the seat's processed/ (or it out of "
                         "the letterbox), give a seat its inbox/ and processed/, or make the entry a plain "
                         "readable file or folder.",
    "unreadable-file": "It may be a reply to, or a newer version of, any letter its legible headers do not "
                       "rule out: those answers are unknown until it is fixed or removed.",
}


def group_lines(model: AppModel, group) -> list[Content]:
    """What a seat owes, for the pane when the cursor is on its heading."""
    n = len(group.items)
    lines = [cleans(Content.styled(group.seat, "bold"), Content(f" owes {n} task{'s' if n != 1 else ''}"))]
    if group.late:
        lines.append(Content.styled(f"  {group.late} late", "bold $late"))
    if group.uncertain:
        lines.append(Content.styled(f"  {group.uncertain} uncertain: the record cannot settle late or answered", "$unknown"))
    lines.append(Content(""))
    lines.append(Content.styled("Enter reads its first task; z folds or unfolds this seat, Z every seat; { and } jump between seats; "
                                "o lists the most overdue first across seats.", "$text-muted"))
    return lines


def _shown(written: str, when, model: AppModel) -> tuple[str, str]:
    """A header time for the head: in the display zone, with the zone's name (the
    Details tab keeps it as written); one that cannot be read stays as written."""
    if when is not None:
        return full(when, model.zone), ""
    return (written or "(none)"), ("$unknown" if written else "")


def head_text(model: AppModel, x: Letter) -> Content:
    res = model.res
    lines = [
        cleans(Content.styled("Subject  ", "$text-muted"), (x.subject or _slug(x), "bold")),
        cleans(Content.styled("From     ", "$text-muted"), (x.sender, "bold"), Content(" → "), (x.recipient, "bold"),
               Content.styled("   type ", "$text-muted"), (x.type, "bold"),
               Content.styled("   priority ", "$text-muted"), (x.priority or "-", "")),
        cleans(Content.styled("Sent     ", "$text-muted"), _shown(x.sent, x.sent_at, model),
               Content.styled("   deadline ", "$text-muted"), _shown(x.deadline, x.deadline_at, model)),
        cleans(Content.styled("Id       ", "$text-muted"), (x.id, "")),
    ]
    answers = []
    unknown = []
    for name, ans in (("state", res.state(x)), ("answered", res.answered(x)), ("current", res.current(x)),
                      ("late", res.late(x))):
        value, style = answer_text(ans, name)
        answers.append(Content.assemble((f"{name} ", "$text-muted"), (value, style), ("   ", "")))
        if ans.value == "unknown":
            unknown.extend(ans.reasons)
    lines.append(Content("Answers  ") + Content("").join(answers))
    if unknown:
        # one line per distinct reason, naming every answer it makes unknown
        merged: dict[tuple[str, str], list[str]] = {}
        for r in unknown:
            abouts = merged.setdefault((r.code, r.detail), [])
            if r.about not in abouts:
                abouts.append(r.about)
        distinct = [Reason(code, ", ".join(abouts), detail) for (code, detail), abouts in merged.items()]
        lines.append(Content.styled("Unknown because", "bold $unknown"))
        lines.extend(reason_lines(distinct[:4], brief=True))
        if len(distinct) > 4:
            lines.append(Content.styled(f"    … {len(distinct) - 4} more reasons in Provenance", "$text-muted"))
    if x.supersedes:
        lines.append(cleans(Content.styled("Supersedes ", "$text-muted"), (x.supersedes, "")))
    if x.disputes:
        lines.append(cleans(Content.styled("Disputes ", "$text-muted"), (", ".join(x.disputes), "")))
    if x.rules_on:
        lines.append(cleans(Content.styled("Rules on ", "$text-muted"), (x.rules_on, ""),
                            Content.styled("  upholds ", "$text-muted"), (x.upholds or "(nothing: closes without settling)", "")))
    from letterbox_tui.core.views.letter import dispute_line, disputed_by

    # what the letter itself never says
    for dispute, rulings in disputed_by(res, x):
        text = dispute_line(dispute.id, [r.id for r in rulings])
        lines.append(cleans((text[:1].upper() + text[1:], "$dispute" if not rulings else "")))
    return Content("\n").join(lines)


@dataclass(slots=True)
class ThreadLine:
    """One line of the Thread tab: a letter of the tree (with the letter it hangs
    under), or a caption (``letter`` None)."""

    content: Content
    letter: Letter | None = None
    parent: Letter | None = None


def thread_lines(model: AppModel, x: Letter) -> list[ThreadLine]:
    """The thread of ``x`` as a reply tree (``core.views.thread``, as ``letterbox-tui
    thread`` prints it), one line a letter, depth first.

    A reply hangs under the letter its ``re`` names. A letter whose ``re`` names no letter
    of the thread, or that is in it by its label alone, is a root of its own, saying so:
    nothing on disk says it replies to the thread's root.
    """
    view = model.thread(x.thread_id)
    nodes = list(view.nodes)
    if not any(n.letter is x for n in nodes):  # (a letter is always in its own thread)
        from letterbox_tui.core.views.thread import Node

        nodes.append(Node(x, 0, "detached"))
    n_all = len(nodes)
    out = [ThreadLine(cleans(Content.styled("Thread ", "bold"), (x.thread_id, "bold"),
                             Content.styled(f"  ({n_all} letter{'s' if n_all != 1 else ''})"
                                            "   j/k move · Enter open · h parent", "$text-muted")))]
    shown = nodes[:MAX_TREE_LINES]
    # is each shown node the last child of its parent? (one pass from the end, no recursion)
    last = [True] * len(shown)
    later: list[bool] = []  # later[d]: a sibling at depth d follows
    for i in range(len(shown) - 1, -1, -1):
        d = shown[i].depth
        del later[d + 1:]
        while len(later) <= d:
            later.append(False)
        last[i] = not later[d]
        later[d] = True
    parents: list = []  # parents[d]: the letter at depth d on the way down
    open_bars: list[bool] = []  # open_bars[d]: depth d's node has a later sibling (draw │)
    notes = {"label": "  (in the thread by its label; no re)", "loop": "  (on a reply loop)"}
    for i, n in enumerate(shown):
        d = n.depth
        del parents[d:]
        del open_bars[d:]
        parent = parents[-1] if parents and d else None
        if d == 0:
            prefix = ""
        else:
            bars = "".join("    " if not bar else "│   " for bar in open_bars[1:d])
            prefix = _indent(bars) + ("└─> " if last[i] else "├─> ")
        line = tree_line(model, n.letter, prefix, n.letter is x)
        if n.via == "detached":
            line += cleans(Content.styled("  (replies to ", "$text-muted"), (n.letter.re, "$text-muted"),
                           Content.styled(", not in this thread)", "$text-muted"))
        elif n.via in notes:
            line += Content.styled(notes[n.via], "$text-muted")
        out.append(ThreadLine(line, n.letter, parent))
        parents.append(n.letter)
        open_bars.append(not last[i])
    if n_all > MAX_TREE_LINES:
        out.append(ThreadLine(Content.styled(f"… and {n_all - MAX_TREE_LINES} more letters in this thread "
                                             "(letterbox-tui thread ID prints them all)", "$text-muted")))
    return out


def tree_line(model: AppModel, m: Letter, prefix: str, selected: bool) -> Content:
    when = short_time(m.sent_at, model.at, model.zone) if m.sent_at else "?"
    style = "bold reverse" if selected else ""
    return cleans(
        Content.styled(prefix, "$text-muted"),
        (f"{m.type}", "bold" if not selected else style),
        (f"  {m.sender}→{m.recipient}  ", style),
        (m.subject or _slug(m), style),
        Content.styled(f"  {when}", "$text-muted"),
    )


def chain_text(model: AppModel, x: Letter) -> Content:
    """The Chain tab: ``core.views.chain``'s tree of the letter's chain, drawn."""
    from letterbox_tui.core.views.chain import chain_tree

    res = model.res
    tree = chain_tree(res, x, limit=MAX_TREE_LINES, dispute_letters=model.dispute_letters())  # made once per model
    lines: list[Content] = []
    if tree.alone:
        cur = res.current(x)
        lines.append(Content.styled("No supersession chain: nothing supersedes this letter and it supersedes nothing.", "$text-muted"))
        lines.append(Content.assemble(("current: ", "$text-muted"), answer_text(cur, "current")))
        lines.extend(reason_lines(cur.reasons))
        return Content("\n").join(lines)
    head, heads = tree.head, tree.heads
    if head is not None:
        lines.append(cleans(Content.styled("Head (current): ", "bold $current"), (head.id, "bold")))
    else:
        lines.append(Content.styled(f"No single current head: {len(heads)} candidate head{'s' if len(heads) != 1 else ''}", "bold $unknown"))
        for h in heads:
            lines.append(cleans(Content.styled("   candidate ", "$text-muted"), (h.id, "")))
    lines.append(Content(""))
    for line in tree.lines:
        c = line.letter
        prefix = _indent(_rails(line.rails))
        glyph = "" if line.root else ("└─▶ " if line.last else "├─▶ ")
        if line.cycle:
            lines.append(cleans(Content.styled(prefix + glyph, "$text-muted"),
                                Content.styled("↺ cycle back to ", "bold $unknown"), (c.id, "")))
            continue
        cur = res.current(c)
        value, vstyle = answer_text(cur, "current")
        fork = Content.styled(f"  ⑂ fork: superseded by {line.forks} letters", "bold $unknown") if line.forks > 1 else Content("")
        mark = "★ " if head is c else ("▶ " if c is x else "  ")
        sub = _indent(_rails(line.rails + (() if line.root else (not line.last,)))) + ("│   " if line.forks else "    ")
        lines.append(cleans(
            Content.styled(prefix + glyph, "$text-muted"),
            Content.styled(mark, "bold $current" if head is c else "bold"),
            (c.subject or _slug(c), "bold reverse" if c is x else ("$superseded" if cur.no else "bold")),
            Content.styled("  ", ""), (c.type, "$text-muted"), Content.styled(" by ", "$text-muted"), (c.sender, "$text-muted"),
            Content.styled("  current: ", "$text-muted"), Content.styled(value, vstyle),
            fork,
        ))
        lines.append(cleans(Content.styled(sub + "  ", "$text-muted"), (c.id, "$text-muted")))
        for r in cur.reasons:
            lines.append(cleans(Content.styled(sub + "  · ", "$text-muted"),
                                Content.styled(r.code, "$unknown" if r.code != "ruled" else "$success"),
                                (f": {r.detail}" if r.detail else "", "$text-muted")))
    if tree.more:
        lines.append(Content.styled(f"… and {tree.more} more letters in this chain "
                                    "(letterbox-tui current ID lists them all)", "$text-muted"))
    if tree.on_cycle:
        lines.append(Content.styled("On a cycle (no letter starts it): ", "bold $unknown"))
        for c in tree.on_cycle:
            lines.append(cleans(Content("   ↺ "), (c.id, ""), Content.styled("  supersedes ", "$text-muted"), (c.supersedes, "")))
    if tree.dangling:
        lines.append(cleans(Content.styled("Points at ", "$text-muted"), (tree.dangling, ""),
                            Content.styled("  which no readable letter in scope holds", "$unknown")))
    if tree.disputes:  # disputes and rulings about letters of this chain
        lines.append(Content(""))
        lines.append(Content.styled("Disputes and rulings", "bold"))
    for d in tree.disputes:
        lines.append(cleans(Content.styled("  ⚖ dispute ", "$dispute"), (d.id, "bold"),
                            Content.styled(" names ", "$text-muted"), (", ".join(d.disputes), "")))
        rulings = res.rulings(d)
        if not rulings:
            lines.append(Content.styled("      open: no ruling yet", "$unknown"))
        for r in rulings:
            what = f"upholds {r.upholds}" if r.upholds else "upholds nothing (closes the dispute, settles nothing)"
            lines.append(cleans(Content.styled("      ruled by ", "$text-muted"), (r.id, ""), Content(": "), (what, "$success" if r.upholds else "$unknown")))
    return Content("\n").join(lines)


def _rails(rails: tuple[bool, ...]) -> str:
    return "".join("│   " if r else "    " for r in rails)


def provenance_text(model: AppModel, x: Letter, sha256: str, history: dict | None = None) -> Content:
    res = model.res
    snap = model.snapshot
    lines: list[Content] = []

    def row(label: str, value: str, style: str = "") -> None:
        lines.append(cleans(Content.styled(f"{label:<12}", "$text-muted"), (value, style)))

    row("Path", x.path, "bold")
    row("Root", model.root)
    row("Seat/folder", f"{x.seat} / {x.folder}")
    row("File name", x.name)
    row("Size", f"{x.size} bytes")
    row("sha256", sha256)
    if history and history.get("unknown"):  # a shallow clone: when it arrived is not known
        row("Committed", f"unknown: {history['unknown']}", "$text-muted")
    elif history:  # a letterbox in git (core.sync.added): its arrival, beside its own sent
        row("Committed", f"{history['committed_at']} by {history['author']} on "
                         f"{history['machine'] or 'an unknown machine'} ({history['commit'][:12]}); "
                         f"sent {x.sent or 'not given'}")
    row("Flags", ", ".join(x.flags) or "none", "$warning" if x.flags else "")
    if x.malformed:
        row("Malformed", "pointer fields not valid ids: " + ", ".join(x.malformed), "$error")
    row("Sidecar", ".md.ack present (accepted)" if snap.has_sidecar(x) else "none")
    from letterbox_tui.core.sidecar import progress_of

    progress = progress_of(model.root, x, snap)
    if progress is not None:
        row("Progress", progress.line(model.at))
    dupes = res.by_id(x.id)
    if len(dupes) > 1:
        row("Duplicate", "this id is held by: " + ", ".join(d.path for d in dupes), "$error")
    lines.append(Content(""))
    lines.append(cleans(Content.styled("Derived answers", "bold"), Content.styled(f"  at {full(model.at, model.zone)}", "$text-muted")))
    for name, ans in (("current", res.current(x)), ("superseded", res.superseded(x)), ("answered", res.answered(x)),
                      ("accepted", res.accepted(x)), ("state", res.state(x)), ("late", res.late(x))):
        lines.append(Content.assemble((f"  {name:<11}", ""), answer_text(ans, name)))
        lines.extend(reason_lines(ans.reasons))
    head = res.head(x)
    row("  head", head.id if head else "none (no single current letter)")
    replies = res.replies(x)
    acks = res.acks(x)
    if replies:
        row("  replies", ", ".join(r.id for r in replies))
    if acks:
        row("  acks", ", ".join(r.id for r in acks))
    lines.append(Content(""))
    lines.append(Content.styled("Scope", "bold"))
    scope = snap.scope
    row("  complete", "yes" if scope.complete else "no: " + "; ".join(scope.why_incomplete()), "" if scope.complete else "$error")
    from letterbox_tui.core.grammar import parse_time

    scanned = parse_time(scope.scanned_at)  # (the wall clock of the scan, not the app's clock)
    row("  scanned", f"{scope.files} files, {scope.letters} letters, at "
                     f"{full(scanned, model.zone) if scanned else scope.scanned_at}")
    lines.append(Content(""))
    lines.append(Content.styled("Header fields as written", "bold"))
    for k, v in x.fields:
        lines.append(cleans(Content.styled(f"  {k}: ", "$text-muted"), (v, "")))
    return Content("\n").join(lines)


def _indent(prefix: str) -> str:
    """A tree prefix, kept readable when the tree is very deep."""
    if len(prefix) <= 4 * MAX_DEPTH_SHOWN:
        return prefix
    return "┆" + prefix[-4 * MAX_DEPTH_SHOWN + 1:]


def _unreadable_lines(u: Unreadable) -> list[Content]:
    out = [cleans(Content.styled("  error: ", "$text-muted"), (u.error, "$error"))]
    for k, v in u.legible.items():
        out.append(cleans(Content.styled(f"  {k}: ", "$text-muted"), (v, "")))
    return out


def _slug(x: Letter) -> str:
    from letterbox_tui.core.query import slug

    return slug(x)
