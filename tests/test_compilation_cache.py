"""The test session's persistent compilation cache stays writable (``tests/conftest.py``)."""

import pytest
from conftest import _give_cache_entries_access_times
from jax._src.lru_cache import LRUCache  # the capped cache the tests use


def test_entries_without_access_times_no_longer_block_new_entries(tmp_path):
    # an entry as an uncapped process writes it: the program, no access-time file
    (tmp_path / "jit_f-0123-cache").write_bytes(b"program")
    cache = LRUCache(str(tmp_path), max_size=1 << 20)
    with pytest.raises(FileNotFoundError):  # what jax does: the new entry is not stored
        cache.put("jit_g-4567", b"other program")
    assert cache.get("jit_g-4567") is None
    assert _give_cache_entries_access_times(str(tmp_path)) == 1
    assert _give_cache_entries_access_times(str(tmp_path)) == 0
    cache.put("jit_g-4567", b"other program")
    assert cache.get("jit_g-4567") == b"other program" and cache.get("jit_f-0123") == b"program"
