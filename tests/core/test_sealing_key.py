"""The key every cache entry is sealed with (doclens/core/sealing.py): found once per process and
environment (issue 49: working out its file's path at every seal was most of a seal's cost), and
followed when the environment names another file."""

from doclens.core import sealing


def test_the_key_file_is_looked_up_once_per_environment_and_a_new_file_is_followed(tmp_path, monkeypatch):
    looked_up = []
    key_file = sealing.key_file
    monkeypatch.setattr(sealing, "key_file", lambda: looked_up.append(1) or key_file())
    monkeypatch.setenv(sealing.KEY_ENV, str(tmp_path / "one" / "cache.key"))
    sealing.forget_keys()
    try:
        first = [sealing.seal("kind", "key", b"value") for _ in range(50)]
        assert len(set(first)) == 1 and len(looked_up) == 1
        monkeypatch.setenv(sealing.KEY_ENV, str(tmp_path / "two" / "cache.key"))  # no forget_keys: followed
        assert sealing.seal("kind", "key", b"value") != first[0] and len(looked_up) == 2
        monkeypatch.setenv(sealing.KEY_ENV, str(tmp_path / "one" / "cache.key"))
        assert sealing.seal("kind", "key", b"value") == first[0]  # the first file's key, kept
        assert (tmp_path / "one" / "cache.key").read_text().strip() == sealing.cache_key().hex()
    finally:
        monkeypatch.undo()
        sealing.forget_keys()
