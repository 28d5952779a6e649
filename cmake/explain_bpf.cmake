# The BPF side of `--explain` (engine/explain/): when libbpf's headers (pkg-config libbpf, Debian
# libbpf-dev), a clang that targets BPF, bpftool and a kernel BTF to generate vmlinux.h from are all
# here, the programs engine/explain/*.bpf.c are compiled (clang -O2 -g -target bpf, CO-RE against
# a vmlinux.h generated in the build tree, never checked in), each is embedded in a skeleton header
# (bpftool gen skeleton) and iotail_engine is built with IOTAIL_HAVE_EXPLAIN=1. libbpf itself is
# loaded with dlopen when a run traces (engine/explain/libbpf_loader.h), so no other command pays
# for it at start-up and the Debian package does not depend on it. Without them the build goes on
# and BlockTracer::Open says at run time what this build lacked (IOTAIL_EXPLAIN_MISSING).
# Uses: the target iotail_engine. Cache: IOTAIL_WITH_EXPLAIN, IOTAIL_VMLINUX_BTF.
option(IOTAIL_WITH_EXPLAIN "Build the BPF tracer of --explain (libbpf-dev, clang, bpftool)" ON)
set(IOTAIL_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH
    "The kernel BTF vmlinux.h is generated from (any kernel with BTF: the programs are CO-RE)")

set(explain_missing "")
if(NOT IOTAIL_WITH_EXPLAIN)
  list(APPEND explain_missing "IOTAIL_WITH_EXPLAIN=OFF")
else()
  pkg_check_modules(LIBBPF libbpf)
  if(NOT LIBBPF_FOUND)
    list(APPEND explain_missing "libbpf's headers (libbpf-dev)")
  endif()
  find_program(IOTAIL_BPFTOOL bpftool HINTS /usr/sbin /sbin)
  if(NOT IOTAIL_BPFTOOL)
    list(APPEND explain_missing "bpftool")
  endif()
  find_program(IOTAIL_BPF_CLANG NAMES clang clang-16 clang-15 clang-14)
  if(IOTAIL_BPF_CLANG)
    execute_process(COMMAND ${IOTAIL_BPF_CLANG} -target bpf -x c -c /dev/null -o /dev/null
                    RESULT_VARIABLE clang_bpf_rc OUTPUT_QUIET ERROR_QUIET)
    if(NOT clang_bpf_rc EQUAL 0)
      list(APPEND explain_missing "a clang that targets BPF (${IOTAIL_BPF_CLANG} does not)")
    endif()
  else()
    list(APPEND explain_missing "clang")
  endif()
  if(NOT EXISTS ${IOTAIL_VMLINUX_BTF})
    list(APPEND explain_missing "a kernel BTF (${IOTAIL_VMLINUX_BTF})")
  endif()
endif()

if(explain_missing)
  list(JOIN explain_missing ", " explain_missing_text)
  message(WARNING "--explain: building without the BPF tracer (missing: ${explain_missing_text})")
  target_compile_definitions(iotail_engine PRIVATE
                             "IOTAIL_EXPLAIN_MISSING=\"${explain_missing_text}\"")
  return()
endif()

set(bpf_gen ${CMAKE_BINARY_DIR}/generated/explain)
set(bpf_src ${CMAKE_SOURCE_DIR}/engine/explain)
file(MAKE_DIRECTORY ${bpf_gen})
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(bpf_arch x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(bpf_arch arm64)
else()
  set(bpf_arch ${CMAKE_SYSTEM_PROCESSOR})
endif()

# vmlinux.h: once per build tree (the programs relocate to the running kernel when loaded).
add_custom_command(OUTPUT ${bpf_gen}/vmlinux.h
  COMMAND sh -c "\"$0\" btf dump file \"$1\" format c > \"$2.tmp\" && mv \"$2.tmp\" \"$2\""
          ${IOTAIL_BPFTOOL} ${IOTAIL_VMLINUX_BTF} ${bpf_gen}/vmlinux.h
  COMMENT "vmlinux.h from ${IOTAIL_VMLINUX_BTF}" VERBATIM)

set(bpf_include_flags "")
foreach(dir ${LIBBPF_INCLUDE_DIRS})
  list(APPEND bpf_include_flags -I${dir})
endforeach()
# -mcpu=v3: the fetching atomics (Linux 5.12+) that order the request table's writes (seq).
# DWARF is not needed to load (BTF and its CO-RE records are kept): stripped, the typed object
# embedded in iotail is a tenth of its size.
find_program(IOTAIL_LLVM_STRIP NAMES llvm-strip llvm-strip-16 llvm-strip-15 llvm-strip-14)
set(skeletons "")
foreach(program block_trace_btf block_trace_tp)
  add_custom_command(OUTPUT ${bpf_gen}/${program}.bpf.o
    COMMAND ${IOTAIL_BPF_CLANG} -O2 -g -Wall -Werror -target bpf -mcpu=v3 -D__TARGET_ARCH_${bpf_arch}
            -I${bpf_gen} -I${bpf_src} ${bpf_include_flags} -c ${bpf_src}/${program}.bpf.c
            -o ${bpf_gen}/${program}.bpf.o
    COMMAND $<IF:$<BOOL:${IOTAIL_LLVM_STRIP}>,${IOTAIL_LLVM_STRIP},true> -g
            ${bpf_gen}/${program}.bpf.o
    DEPENDS ${bpf_src}/${program}.bpf.c ${bpf_src}/trace_common.bpf.h ${bpf_src}/trace_record.h
            ${bpf_gen}/vmlinux.h
    COMMENT "BPF ${program}.bpf.o" VERBATIM)
  add_custom_command(OUTPUT ${bpf_gen}/${program}.skel.h
    COMMAND sh -c "\"$0\" gen skeleton \"$1\" name \"$2\" > \"$3.tmp\" && mv \"$3.tmp\" \"$3\""
            ${IOTAIL_BPFTOOL} ${bpf_gen}/${program}.bpf.o ${program} ${bpf_gen}/${program}.skel.h
    DEPENDS ${bpf_gen}/${program}.bpf.o
    COMMENT "BPF skeleton ${program}.skel.h" VERBATIM)
  list(APPEND skeletons ${bpf_gen}/${program}.skel.h)
endforeach()
target_sources(iotail_engine PRIVATE ${skeletons})
target_include_directories(iotail_engine PRIVATE ${bpf_gen} ${LIBBPF_INCLUDE_DIRS})
target_compile_definitions(iotail_engine PRIVATE IOTAIL_HAVE_EXPLAIN=1)
target_link_libraries(iotail_engine PRIVATE ${CMAKE_DL_LIBS})
set_property(GLOBAL APPEND PROPERTY IOTAIL_FEATURES
             "explain (libbpf ${LIBBPF_VERSION}, loaded when a run traces)")
