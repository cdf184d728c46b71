"""A derived file the scan did not use (damaged, another format) is said once, as one
notification after the scan; the answer is the letters' own."""

from __future__ import annotations

from letterbox_tui.core.speed.cache import cache_path
from letterbox_tui.core.speed.choice import scan_cached
from letterbox_tui.core.speed.files import notice, take_notices
from tests.app.helpers import SIZE, app_for, scanned


async def test_a_damaged_header_cache_is_one_notification(letterbox):
    scan_cached(letterbox.root, id_time_is_utc=False)
    path = cache_path(letterbox.root, False)
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(path, "wb").write(bytes(data))
    take_notices()
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        said = [str(n.message) for n in app._notifications if n.title == "Derived files"]
        assert len(said) == 1 and "header cache" in said[0] and "checksum mismatch" in said[0], said
        assert app.model is not None and app.model.snapshot.letters


async def test_no_notification_when_every_derived_file_was_used(letterbox):
    notice("a line from before the app's scan (another command, another test)")
    app = app_for(letterbox)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert not [n for n in app._notifications if n.title == "Derived files"]
