// Where the time of a 100 B DiskCache write goes (issue #18): manifest designs
// driven bare through SQLite's C API, beside the raw floor (a WITHOUT ROWID
// key-value table written by one autocommit upsert). Each variant writes 1,000
// values of 100 B under distinct keys into a fresh database (WAL,
// synchronous=NORMAL); the variants are interleaved per round and the median of
// the rounds is printed, as CPU time of the writing thread per write (so that
// other load on a shared machine does not inflate it; an fsync's wait is not
// CPU time: on a disk, time the same code with CLOCK_MONOTONIC).
//
//   cc -O2 -o manifest-variants manifest-variants.c -lsqlite3
//   ./manifest-variants DIR ROUNDS [PAGE_SIZE [WAL_AUTOCHECKPOINT [NO_AUTO_VACUUM]]]
//   BATCH=8 ./manifest-variants DIR ROUNDS   (8 writes per transaction: what group commit
//                                            can save at best when 8 writers share commits)
//
// "current": DiskCache's schema version 3 (rowid table, key index, access index,
// partial expiration index, totals row): BEGIN IMMEDIATE, SELECT of the replaced
// row, upsert, totals UPDATE, COMMIT. "WR": the same columns in a WITHOUT ROWID
// table keyed by the key.
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

static long long now_ns(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
static void ex(sqlite3*db,const char*s){char*m=0;if(sqlite3_exec(db,s,0,0,&m)){fprintf(stderr,"%s: %s\n",s,m);exit(1);}}
static sqlite3_stmt*prep(sqlite3*db,const char*s){sqlite3_stmt*st;if(sqlite3_prepare_v3(db,s,-1,SQLITE_PREPARE_PERSISTENT,&st,0)){fprintf(stderr,"%s: %s\n",s,sqlite3_errmsg(db));exit(1);}return st;}
static void run(sqlite3_stmt*st){int r;while((r=sqlite3_step(st))==SQLITE_ROW);if(r!=SQLITE_DONE){fprintf(stderr,"step %d %s\n",r,sqlite3_errmsg(sqlite3_db_handle(st)));exit(1);}sqlite3_reset(st);}

const char*SCHEMA_CUR="CREATE TABLE manifest (key TEXT NOT NULL PRIMARY KEY, filename TEXT, size INTEGER NOT NULL, inline_data BLOB, modification_time INTEGER NOT NULL, last_access_time INTEGER NOT NULL, expiration_time INTEGER, extended_data BLOB);"
 "CREATE INDEX manifest_last_access_time ON manifest(last_access_time, modification_time);"
 "CREATE INDEX manifest_expiration_time ON manifest(expiration_time) WHERE expiration_time IS NOT NULL;"
 "CREATE TABLE manifest_totals (id INTEGER PRIMARY KEY CHECK (id = 0), count INTEGER NOT NULL, size INTEGER NOT NULL, file_count INTEGER NOT NULL);"
 "INSERT INTO manifest_totals VALUES (0,0,0,0);";
const char*UPSERT="INSERT INTO manifest (key, filename, size, inline_data, modification_time, last_access_time, expiration_time, extended_data) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7) ON CONFLICT (key) DO UPDATE SET filename = excluded.filename, size = excluded.size, inline_data = excluded.inline_data, modification_time = excluded.modification_time, last_access_time = excluded.last_access_time, expiration_time = excluded.expiration_time, extended_data = excluded.extended_data";

int variant; int N=1000; int batch=1; int noav=0; const char*dir; int pagesize=0; int ckpt=0;
char keys[2000][16]; unsigned char val[100];

static double one(int round){
  char path[512]; snprintf(path,512,"%s/v%d-%d.sqlite",dir,variant,round);
  char p2[600]; unlink(path); snprintf(p2,600,"%s-wal",path); unlink(p2); snprintf(p2,600,"%s-shm",path); unlink(p2);
  sqlite3*db; sqlite3_open_v2(path,&db,SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE|SQLITE_OPEN_NOMUTEX,0);
  if(pagesize){char s[64];snprintf(s,64,"PRAGMA page_size=%d",pagesize);ex(db,s);}
  if(variant>=2 && !noav) ex(db,"PRAGMA auto_vacuum=INCREMENTAL");
  ex(db,"PRAGMA journal_mode=WAL"); ex(db,"PRAGMA synchronous=NORMAL");
  if(ckpt){char s[64];snprintf(s,64,"PRAGMA wal_autocheckpoint=%d",ckpt);ex(db,s);}
  sqlite3_stmt *a=0,*b=0,*c=0,*beg=prep(db,"BEGIN IMMEDIATE"),*com=prep(db,"COMMIT");
  switch(variant){
  case 0: ex(db,"CREATE TABLE kv (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID");
    a=prep(db,"INSERT INTO kv (key,value) VALUES (?1,?2) ON CONFLICT(key) DO UPDATE SET value=excluded.value"); break;
  case 1: ex(db,"CREATE TABLE kv (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL)");
    a=prep(db,"INSERT OR REPLACE INTO kv (key, value) VALUES (?1, ?2)"); break;
  default: ex(db,SCHEMA_CUR); a=prep(db,UPSERT); b=prep(db,"SELECT filename, size FROM manifest WHERE key = ?1");
    c=prep(db,"UPDATE manifest_totals SET count = count + ?1, size = size + ?2, file_count = file_count + ?3 WHERE id = 0"); break;
  case 10: case 11: case 12: case 13:
    ex(db,"CREATE TABLE manifest (key TEXT NOT NULL PRIMARY KEY, filename TEXT, size INTEGER NOT NULL, inline_data BLOB, modification_time INTEGER NOT NULL, last_access_time INTEGER NOT NULL, expiration_time INTEGER, extended_data BLOB) WITHOUT ROWID;"
      "CREATE TABLE manifest_totals (id INTEGER PRIMARY KEY CHECK (id = 0), count INTEGER NOT NULL, size INTEGER NOT NULL, file_count INTEGER NOT NULL);INSERT INTO manifest_totals VALUES (0,0,0,0);");
    if(variant!=13) ex(db,"CREATE INDEX manifest_last_access_time ON manifest(last_access_time, modification_time);");
    ex(db,"CREATE INDEX manifest_expiration_time ON manifest(expiration_time) WHERE expiration_time IS NOT NULL;");
    a=prep(db,UPSERT); b=prep(db,"SELECT filename, size FROM manifest WHERE key = ?1");
    c=prep(db,"UPDATE manifest_totals SET count = count + ?1, size = size + ?2, file_count = file_count + ?3 WHERE id = 0"); break;
  }
  long long t0=now_ns();
  for(int i=0;i<N;i++){
    const char*k=keys[i]; int kl=strlen(k);
    int opens = batch>1 ? i%batch==0 : 1, closes = batch>1 ? (i%batch==batch-1 || i==N-1) : 1;
    if(variant<=1){ if(batch>1&&opens) run(beg); sqlite3_bind_text(a,1,k,kl,0); sqlite3_bind_blob(a,2,val,100,0); run(a); if(batch>1&&closes) run(com); continue; }
    int txn = !(variant==5) || batch>1;
    if(txn && opens) run(beg);
    if(variant==2||variant==3||variant==10||variant==12||variant==13){ sqlite3_bind_text(b,1,k,kl,0); run(b); }
    sqlite3_bind_text(a,1,k,kl,0); sqlite3_bind_null(a,2); sqlite3_bind_int64(a,3,100); sqlite3_bind_blob(a,4,val,100,0);
    sqlite3_bind_int64(a,5,now_ns()); sqlite3_bind_null(a,6); sqlite3_bind_null(a,7); run(a);
    if(variant==2||variant==4||variant==10||variant==13){ sqlite3_bind_int64(c,1,1); sqlite3_bind_int64(c,2,100); sqlite3_bind_int64(c,3,0); run(c);} 
    if(txn && closes) run(com);
  }
  long long t1=now_ns();
  sqlite3_finalize(a); if(b)sqlite3_finalize(b); if(c)sqlite3_finalize(c); sqlite3_finalize(beg); sqlite3_finalize(com);
  sqlite3_close(db);
  unlink(path); snprintf(p2,600,"%s-wal",path); unlink(p2); snprintf(p2,600,"%s-shm",path); unlink(p2);
  return (t1-t0)/(double)N;
}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  dir=argv[1]; int rounds=atoi(argv[2]); if(argc>3)pagesize=atoi(argv[3]); if(argc>4)ckpt=atoi(argv[4]); if(argc>5)noav=atoi(argv[5]);
  if(getenv("BATCH")) batch=atoi(getenv("BATCH")); if(batch<1) batch=1;
  for(int i=0;i<2000;i++)snprintf(keys[i],16,"key%d",i);
  for(int i=0;i<100;i++)val[i]=rand();
  int vs[]={0,1,2,3,4,5,6,10,11,12,13}; int nv=sizeof vs/sizeof*vs;
  double r[20][50];
  for(int k=0;k<rounds+1;k++) for(int j=0;j<nv;j++){ variant=vs[(j+k)%nv]; double x=one(k); if(k>0) r[(j+k)%nv][k-1]=x; }
  const char*names[]={"raw WITHOUT ROWID upsert","raw rowid INSERT OR REPLACE","current: sel+ups+totals","sel+ups (no totals)","ups+totals (no select)","ups autocommit (current schema)","ups in txn only","WR: sel+ups+totals","WR: ups only","WR: sel+ups","WR no access idx: sel+ups+totals"};
  for(int j=0;j<nv;j++){qsort(r[j],rounds,sizeof(double),cmp);printf("%-40s %8.2f us\n",names[j],r[j][rounds/2]/1000);}
}
