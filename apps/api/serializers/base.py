"""Building blocks of the API's input and output serializers."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.fields import SkipField
from rest_framework.relations import PKOnlyObject
from rest_framework.utils.serializer_helpers import BindingDict

from apps.api.errors import UNKNOWN_FIELD

# Largest id PostgreSQL's bigint holds; larger numbers cannot name a row.
MAX_ID = 2**63 - 1
MAX_SMALL_INT = 2**31 - 1


class StrictSerializer(serializers.Serializer):
    """An input serializer that refuses fields it does not declare: each one is reported
    at its path with the UNKNOWN_FIELD code, beside any other problem of the body (a typo
    in a field name never passes silently). The OpenAPI schema says so too
    (``additionalProperties: false``, see apps.api.schema)."""

    def to_internal_value(self, data: Any) -> Any:
        unknown: dict[str, list[ErrorDetail]] = {}
        if isinstance(data, Mapping):
            known = {name for name, field in self.fields.items() if not field.read_only}
            unknown = {
                str(key): [ErrorDetail("Unknown field.", code=UNKNOWN_FIELD)]
                for key in data
                if key not in known
            }
        try:
            value = super().to_internal_value(data)
        except ValidationError as exc:
            if unknown and isinstance(exc.detail, dict):
                exc.detail.update(unknown)
            raise
        if unknown:
            raise ValidationError(unknown)
        return value


class ShownModelSerializer(serializers.ModelSerializer):
    """An output serializer whose fields are built and bound once per class, then shared
    by every instance: DRF builds them again for each serializer instance (one per nested
    level, list item and request), which cost more than rendering the rows. So the fields,
    nested serializers and method fields of such a serializer render the object they are
    given and never read the serializer's context or state."""

    @property
    def fields(self) -> BindingDict:
        cls = type(self)
        shared = cls.__dict__.get("_shared_fields")
        if shared is None:
            with _SHARED_FIELDS_LOCK:
                shared = cls.__dict__.get("_shared_fields")
                if shared is None:
                    # Bound to an instance of the class made for it, never to a caller's.
                    shared = serializers.ModelSerializer.fields.func(cls())
                    cls._shared_fields = shared
        return shared

    def to_representation(self, instance: Any) -> Any:
        """DRF's representation, field by field, with its generic attribute lookup kept
        for the fields that need it: a field read from one plain attribute is read with
        ``getattr`` (DRF's lookup checks each step for a mapping and a callable, and
        this runs for every field of every row of a page); a list of prefetched related
        rows is read from the prefetch cache its related manager would answer from.
        Anything unusual (a mapping, a missing attribute, a callable) goes through DRF's
        own lookup, so the output is DRF's."""
        if isinstance(instance, Mapping):
            return super().to_representation(instance)
        plan = type(self).__dict__.get("_representation_plan")
        if plan is None:
            plan = type(self)._representation_plan = tuple(
                (field.field_name, _plain_source(field), field) for field in self._readable_fields
            )
        ret = {}
        prefetched = instance.__dict__.get("_prefetched_objects_cache", {})
        for name, source, field in plan:
            if source in prefetched and isinstance(field, serializers.ListSerializer):
                # What its related manager's all() answers, without making the manager.
                ret[name] = field.to_representation(prefetched[source])
                continue
            if source is not None:
                try:
                    attribute = getattr(instance, source)
                except ObjectDoesNotExist:
                    attribute = None
                except (KeyError, AttributeError):
                    source = None
                else:
                    if callable(attribute):  # a method DRF calls, a related manager
                        source = None
            if source is None:
                try:
                    attribute = field.get_attribute(instance)
                except SkipField:
                    continue
                if isinstance(attribute, PKOnlyObject):
                    ret[name] = None if attribute.pk is None else field.to_representation(attribute)
                    continue
            ret[name] = None if attribute is None else field.to_representation(attribute)
        return ret


def _plain_source(field: serializers.Field) -> str | None:
    """The attribute a field reads when it is one attribute read as DRF's base Field
    reads it (not a related field's, not a method field's, not dotted), else None."""
    if type(field).get_attribute is not serializers.Field.get_attribute:
        return None
    attrs = field.source_attrs
    return attrs[0] if len(attrs) == 1 else None


_SHARED_FIELDS_LOCK = threading.Lock()


# JSON input fields that take only their own JSON type: DRF would read "5" as 5, 5 as "5"
# and "yes" as true, which lets a body the schema forbids pass (and hides client bugs).


class TextField(serializers.CharField):
    """A JSON string (DRF's CharField also takes numbers)."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class IntegerField(serializers.IntegerField):
    """A JSON integer (not a string of digits, not 5.0)."""

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, int) or isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class NumberInputField(serializers.FloatField):
    """A JSON number."""

    def to_internal_value(self, data: Any) -> float:
        if not isinstance(data, int | float) or isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class BooleanField(serializers.BooleanField):
    """A JSON true or false (not "yes", not 1)."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class URLField(serializers.URLField):
    """A JSON string that is a URL."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class IdField(IntegerField):
    """A row id: a positive integer a bigint can hold."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(**kwargs)


def _check_storable(value: Any, path: str = "") -> None:
    """PostgreSQL's jsonb refuses NUL characters and lone surrogates in any string."""
    if isinstance(value, str):
        if "\x00" in value or any("\ud800" <= c <= "\udfff" for c in value):
            raise ValidationError(f"{path or 'A value'} contains a character that is not allowed.")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _check_storable(key, path)
            _check_storable(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_storable(item, f"{path}.{i}" if path else str(i))


class JSONObjectField(serializers.DictField):
    """A free-form JSON object (per-platform settings), checked to be storable."""

    def to_internal_value(self, data: Any) -> dict:
        value = super().to_internal_value(data)
        _check_storable(value)
        return value


class ScheduleTextField(TextField):
    """An ISO-8601 date and time kept as text: the publication services parse it (so an
    instant without an offset gets their MISSING_UTC_OFFSET, a local time their DST rules).
    Only years a time zone conversion cannot overflow are let through."""

    def to_internal_value(self, data: Any) -> str:
        text = super().to_internal_value(data)
        try:
            parsed = datetime.fromisoformat(text.strip())
        except ValueError:
            return text  # the service reports it with its own code
        if not 2 <= parsed.year <= 9998:
            raise ValidationError("The date is out of range.")
        return text


@extend_schema_field(OpenApiTypes.NUMBER)
class NumberField(serializers.Field):
    """An int or a float, shown as it is."""

    def to_representation(self, value: Any) -> Any:
        return value

    def to_internal_value(self, data: Any) -> Any:
        return data
