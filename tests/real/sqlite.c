/* real-pkg: sqlite3
 * Real-library driver: SQLite (Debian's libsqlite3).  work() opens an
 * in-memory database, inserts rows and runs a GROUP BY query.  With the
 * argument "0" main skips work() (the baseline run of run.sh). */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 12

static long result;

static int row_cb(void *arg, int n, char **val, char **col)
{
	(void)arg; (void)col;
	for (int i = 0; i < n; i++)
		result += val[i] ? atol(val[i]) : 0;
	return 0;
}

__attribute__((noinline)) static void work(void)
{
	sqlite3 *db;
	char sql[128];

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		exit(2);
	sqlite3_exec(db, "CREATE TABLE t(k INTEGER, v REAL, s TEXT)", 0, 0, 0);
	for (int i = 0; i < ROWS; i++) {
		snprintf(sql, sizeof sql,
			 "INSERT INTO t VALUES(%d, %d.5, 'r%d')", i % 7, i, i);
		sqlite3_exec(db, sql, 0, 0, 0);
	}
	sqlite3_exec(db, "SELECT k, count(*), sum(v) FROM t GROUP BY k",
		     row_cb, 0, 0);
	sqlite3_close(db);
}

int main(int argc, char **argv)
{
	/* Initialise the library outside work(): only the work is compared. */
	sqlite3_initialize();
	if (argc < 2 || argv[1][0] != '0')
		work();
	printf("%ld\n", result);
	return 0;
}
