"""What every room stands on and that knows none of them: the error family, the base of persisted records, reading
untrusted files, the one jinja2 setup, names a package imports on first use, and the names Promptfoo shows for
metrics (import-light: an assertion process reads them), and the settings: every environment variable the package
reads, read once where a process starts."""
