"""Log formatters selected by LOG_FORMAT: `json` (one object per line) or `text`.

Context ids travel with `extra=`:
`logger.info("published", extra={"rendition_id": r.pk, "job_id": job.pk})`.
"""

import json
import logging
from datetime import UTC, datetime

CONTEXT_KEYS = ("organization_id", "workspace_id", "publication_id", "rendition_id", "job_id")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: timestamp, level, logger, message, the context ids given,
    and the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in CONTEXT_KEYS:
            value = getattr(record, key, None)
            if value is not None:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        # default=str: an id may be a UUID, or a caller may pass a model instance.
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """Human-readable lines for local work; context ids are appended as key=value."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        context = " ".join(
            f"{key}={getattr(record, key)}"
            for key in CONTEXT_KEYS
            if getattr(record, key, None) is not None
        )
        if not context:
            return line
        # Keep a traceback below the line it belongs to.
        first, sep, rest = line.partition("\n")
        return f"{first} [{context}]{sep}{rest}"
