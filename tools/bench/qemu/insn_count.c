/* A qemu-user TCG plugin that counts the guest instructions executed in each ELF file.
 *
 * Every translated block is charged to the file mapped at its first instruction's host address
 * (qemu-user maps guest memory into its own address space, so the host's /proc/self/maps names the
 * file: the program, each shared library, or "[anonymous]" for JIT code). The count is an inline
 * add of the block's instruction count on each execution. Counts of threads running blocks of the
 * same file at once may race (qemu 7.2 has no per-vCPU scoreboards); at 1 compute thread only one
 * thread runs a kernel library.
 *
 * Build against qemu-plugin.h of the installed qemu's source package (not committed; scripts/
 * bench_aarch64.sh fetches it):  cc -shared -fPIC -O2 -I QEMU_SRC/include/qemu insn_count.c -o libinsn_count.so
 * Use:  qemu-aarch64 -plugin ./libinsn_count.so,out=counts.tsv[,by=symbol] ... program
 * Output (written at exit): one line per file, "instructions<TAB>path", most first. With by=symbol,
 * blocks whose first instruction has a symbol (qemu knows the main program's) are charged to
 * "path<TAB>symbol" instead: where a kernel's instructions go, for tuning.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

enum { kMaxFiles = 16384, kMaxRegions = 8192 };

struct region {
  uintptr_t start, end;
  int file;
};

static char *files[kMaxFiles];
static uint64_t counts[kMaxFiles];
static int n_files;
static struct region regions[kMaxRegions];
static int n_regions;
static char out_path[4096];
static int by_symbol;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int file_index(const char *path) {
  for (int i = 0; i < n_files; ++i) {
    if (strcmp(files[i], path) == 0) return i;
  }
  if (n_files == kMaxFiles) return kMaxFiles - 1; /* the last slot collects the overflow */
  files[n_files] = strdup(path);
  return n_files++;
}

/* Re-reads the mappings of this process. qemu-user maps guest code without host execute
 * permission (it is translated, never run), so every mapping counts, not only "x" ones. */
static void load_maps(void) {
  FILE *maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return;
  n_regions = 0;
  char line[8192];
  while (fgets(line, sizeof line, maps) != NULL && n_regions < kMaxRegions) {
    unsigned long start, end;
    char perms[8];
    int path_at = 0;
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &path_at) < 3) continue;
    char *path = line + path_at;
    path[strcspn(path, "\n")] = '\0';
    regions[n_regions].start = start;
    regions[n_regions].end = end;
    regions[n_regions].file = file_index(path[0] != '\0' ? path : "[anonymous]");
    ++n_regions;
  }
  fclose(maps);
}

static int find_file(uintptr_t address) {
  for (int i = 0; i < n_regions; ++i) {
    if (address >= regions[i].start && address < regions[i].end) return regions[i].file;
  }
  return -1;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  const size_t n = qemu_plugin_tb_n_insns(tb);
  if (n == 0) return;
  const uintptr_t address = (uintptr_t)qemu_plugin_insn_haddr(qemu_plugin_tb_get_insn(tb, 0));
  pthread_mutex_lock(&lock);
  int file = find_file(address);
  if (file < 0) { /* mapped since the last read (dlopen, JIT) */
    load_maps();
    file = find_file(address);
    if (file < 0) file = file_index("[unknown]");
  }
  const char *symbol = by_symbol ? qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, 0)) : NULL;
  if (symbol != NULL) {
    char key[8192];
    snprintf(key, sizeof key, "%s\t%s", files[file], symbol);
    file = file_index(key);
  }
  pthread_mutex_unlock(&lock);
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &counts[file], n);
}

static int by_count(const void *a, const void *b) {
  const uint64_t ca = counts[*(const int *)a], cb = counts[*(const int *)b];
  return ca < cb ? 1 : ca > cb ? -1 : 0;
}

static void write_counts(qemu_plugin_id_t id, void *data) {
  int order[kMaxFiles];
  for (int i = 0; i < n_files; ++i) order[i] = i;
  qsort(order, (size_t)n_files, sizeof order[0], by_count);
  /* Written to a temporary name and renamed: a reader never sees half a file. */
  char tmp[sizeof out_path + 8];
  snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
  FILE *out = fopen(tmp, "w");
  if (out == NULL) return;
  for (int i = 0; i < n_files; ++i) {
    if (counts[order[i]] > 0) fprintf(out, "%llu\t%s\n", (unsigned long long)counts[order[i]], files[order[i]]);
  }
  if (fclose(out) == 0) rename(tmp, out_path);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
  for (int i = 0; i < argc; ++i) {
    if (strncmp(argv[i], "out=", 4) == 0) snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
    if (strcmp(argv[i], "by=symbol") == 0) by_symbol = 1;
  }
  if (out_path[0] == '\0') {
    fprintf(stderr, "insn_count: give the output file as -plugin libinsn_count.so,out=PATH\n");
    return -1;
  }
  load_maps();
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, write_counts, NULL);
  return 0;
}
