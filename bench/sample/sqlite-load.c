/* bench/sample: SQLite (Debian's libsqlite3) at work for --sample's
 * accuracy (issue 31): ROWS rows (argv[1], default 200000) inserted into
 * an indexed in-memory table in one transaction, then grouped, joined to
 * itself on the index and sorted. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static long result;

static int row_cb(void *arg, int n, char **val, char **col)
{
	(void)arg; (void)col;
	for (int i = 0; i < n; i++)
		result += val[i] ? atol(val[i]) : 0;
	return 0;
}

int main(int argc, char **argv)
{
	int rows = argc > 1 ? atoi(argv[1]) : 200000;
	sqlite3 *db;
	sqlite3_stmt *st;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return 2;
	sqlite3_exec(db, "CREATE TABLE t(k INTEGER, v REAL, s TEXT);"
		     "CREATE INDEX tk ON t(k); BEGIN", 0, 0, 0);
	sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?, ?, ?)", -1, &st, 0);
	for (int i = 0; i < rows; i++) {
		char s[32];
		snprintf(s, sizeof s, "row %d", i * 7919 % rows);
		sqlite3_bind_int(st, 1, i * 7919 % 1000);
		sqlite3_bind_double(st, 2, i * 0.5);
		sqlite3_bind_text(st, 3, s, -1, SQLITE_TRANSIENT);
		sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	sqlite3_exec(db, "COMMIT", 0, 0, 0);
	sqlite3_exec(db, "SELECT k, count(*), sum(v) FROM t GROUP BY k",
		     row_cb, 0, 0);
	sqlite3_exec(db, "SELECT count(*) FROM t a JOIN t b ON a.k = b.k "
		     "WHERE a.v < 2000", row_cb, 0, 0);
	sqlite3_exec(db, "SELECT s FROM t ORDER BY s LIMIT 5", row_cb, 0, 0);
	sqlite3_close(db);
	printf("%ld\n", result);
	return 0;
}
