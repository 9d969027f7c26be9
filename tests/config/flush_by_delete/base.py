from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if not tables or reset_sequences or allow_cascade:
            return super().sql_flush(
                style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return ["SET CONSTRAINTS ALL DEFERRED"] + [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))}"
            for table in tables
        ]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
