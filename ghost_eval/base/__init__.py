"""What every room stands on and that knows none of them: the error family, the base of persisted records, reading
untrusted files, the one jinja2 setup, and names a package imports on first use."""
