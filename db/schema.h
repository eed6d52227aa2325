/* db/schema.h — the migration chain of the dlperf database (internal to db/). */
#ifndef DLPERF_DB_SCHEMA_H
#define DLPERF_DB_SCHEMA_H

/* 'dlpf': PRAGMA application_id of every dlperf database. */
#define DB_APPLICATION_ID 0x646c7066

/* Number of migrations = the user_version of an up-to-date database. */
int db_schema_latest(void);
/* SQL taking user_version from_version to from_version+1, or NULL past the end. */
const char *db_schema_migration(int from_version);

#endif
