from django.db.backends.postgresql import base, operations

# A table holding more rows than this after a test is truncated (a bulk test's thousands of
# dead rows would otherwise stay behind and change the plans later tests are checked on).
MANY_ROWS = 1000
# Every so many flushes, everything is truncated: the dead rows of small deletes never pile up.
FULL_EVERY = 25


class DatabaseOperations(operations.DatabaseOperations):
    flushes = 0

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        DatabaseOperations.flushes += 1
        if (
            not tables
            or reset_sequences
            or allow_cascade
            or DatabaseOperations.flushes % FULL_EVERY == 0
        ):
            return super().sql_flush(
                style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        full = self._holding_many_rows(tables)
        statements = []
        if full:
            # First (a table with deferred checks pending cannot be truncated), and with
            # CASCADE: the tables referring to them are being emptied anyway.
            names = ", ".join(self.quote_name(table) for table in sorted(full))
            statements.append(f"{style.SQL_KEYWORD('TRUNCATE')} {names} CASCADE")
        return (
            statements
            + ["SET CONSTRAINTS ALL DEFERRED"]
            + [
                f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))}"
                for table in tables
                if table not in full
            ]
        )

    def _holding_many_rows(self, tables) -> set[str]:
        counts = " UNION ALL ".join(
            f"SELECT %s::text, (SELECT count(*) FROM (SELECT 1 FROM {self.quote_name(table)} "
            f"LIMIT {MANY_ROWS + 1}) AS head)"
            for table in tables
        )
        with self.connection.cursor() as cursor:
            cursor.execute(counts, list(tables))
            return {table for table, count in cursor.fetchall() if count > MANY_ROWS}


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
