/*
 * COUNT commits to a SQLite database in WAL mode, each its own transaction
 * and synced (synchronous=FULL), then wait to be killed: the commits are
 * in the WAL file, and its index in the -shm file, a shared writable
 * mapping.  Usage: sqlite-wal DB COUNT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sqlite3.h"

static int fail(sqlite3 *db, const char *what)
{
	printf("%s: %s\n", what, sqlite3_errmsg(db));
	return 1;
}

int main(int argc, char **argv)
{
	sqlite3_stmt *mode, *insert;
	sqlite3 *db;
	int i, count;

	if (argc != 3) {
		fprintf(stderr, "usage: sqlite-wal DB COUNT\n");
		return 2;
	}
	count = atoi(argv[2]);
	if (sqlite3_open(argv[1], &db) != SQLITE_OK)
		return fail(db, "open");
	if (sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &mode, NULL) != SQLITE_OK ||
	    sqlite3_step(mode) != SQLITE_ROW)
		return fail(db, "journal_mode");
	if (strcmp((const char *)sqlite3_column_text(mode, 0), "wal")) {
		printf("journal_mode: %s, not wal\n", sqlite3_column_text(mode, 0));
		return 1;
	}
	sqlite3_finalize(mode);
	if (sqlite3_exec(db, "PRAGMA synchronous=FULL;"
			 "CREATE TABLE IF NOT EXISTS commits(n INTEGER PRIMARY KEY, text TEXT)",
			 NULL, NULL, NULL) != SQLITE_OK)
		return fail(db, "create");
	if (sqlite3_prepare_v2(db, "INSERT INTO commits VALUES (?, ?)", -1, &insert,
			       NULL) != SQLITE_OK)
		return fail(db, "prepare");
	for (i = 1; i <= count; i++) {
		char text[32];

		snprintf(text, sizeof(text), "commit %d", i);
		sqlite3_bind_int(insert, 1, i);
		sqlite3_bind_text(insert, 2, text, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(insert) != SQLITE_DONE)
			return fail(db, "insert");
		sqlite3_reset(insert);
	}
	printf("%d commits\n", count);
	fflush(stdout);
	for (;;)
		pause();
}
