// Loads and attaches the programs of the BPF object argv[1], says "attached" on stdout, and keeps
// them attached until stdin closes (scripts/bench-explain.sh's floor runs).
#include <bpf/libbpf.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OBJECT.bpf.o\n", argv[0]);
    return 2;
  }
  struct bpf_object *object = bpf_object__open_file(argv[1], NULL);
  if (object == NULL || bpf_object__load(object) != 0) {
    perror("loading the BPF object");
    return 1;
  }
  struct bpf_program *program;
  bpf_object__for_each_program(program, object) {
    if (bpf_program__attach(program) == NULL) {
      perror("attaching");
      return 1;
    }
  }
  printf("attached\n");
  fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0) {
  }
  bpf_object__close(object);
  return 0;
}
