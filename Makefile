# ngx_http_toolsearch_module
#
#   make          the dynamic module, the engine CLI and its unit tests
#   make test     unit tests, the integration suite (real nginx), then
#                 real clients (Claude Code, the Anthropic SDK, opencode,
#                 cline, continue, the Vercel AI SDK, LangChain.js, MCP
#                 servers from npm, installed into build/) through the
#                 gateway
#   make integration [NGINX=path]  the integration suite only, against
#                 Debian's nginx or another binary (docs/operations.md)
#   make versions the integration suite against nginx 1.26.3 (module
#                 dynamic, compiled in), sid's newest and an ASan+UBSan
#                 build, each built from Debian's source (build/nginx-builds)
#   make e2e      the real clients only, and the tables of docs/clients.md
#   make run      the gateway demo against the bundled emulator
#   make deb      the Debian package libnginx-mod-http-toolsearch
#   make bench    the benchmarks, written into docs/benchmarks.md
#   make asan     the engine's unit tests under ASan and UBSan
#   make fuzz     each libFuzzer target for FUZZ_TIME seconds (clang-14)
#
# Debian bookworm: missing packages are installed when run as root.

CC        ?= cc
CFLAGS    ?= -O2 -g
PYTHON    ?= /usr/bin/python3
NGINX_SRC ?= /usr/share/nginx/src
NGINX     ?= /usr/sbin/nginx
FUZZ_CC   ?= clang-14
FUZZ_TIME ?= 60
ASAN_CC   ?= $(CC)

B         := build
VERSION   := 0.1.0
DEB_REV   := 1
TS_FLAGS  := -std=c99 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -Isrc
LIBS      := -lcjson -lpcre2-8 -lm

# one list per folder, which config reads too
listed       = $(addprefix $(1)/,$(shell grep '^[a-z].*\.[ch]$$' $(1)/sources))
ENGINE_FILES := $(call listed,src)
ENGINE_SRCS  := $(filter %.c,$(ENGINE_FILES))
ENGINE_HDRS  := $(filter %.h,$(ENGINE_FILES))
ENGINE_OBJS  := $(ENGINE_SRCS:src/%.c=$(B)/engine/%.o)
CLI_OBJS     := $(B)/engine/cli/ts_cli.o $(B)/engine/cli/ts_cli_conf.o \
                $(B)/engine/cli/ts_cli_search.o
UNIT_SRCS    := $(wildcard t/unit/*.c)
GLUE         := $(call listed,ngx_http_toolsearch_module)

.PHONY: all deps test-deps bench-deps fuzz-deps versions-deps test unit \
        integration versions \
        e2e e2e-run run clean bench bench-search search-eval deb asan fuzz \
        fuzz-build

all: $(B)/ngx_http_toolsearch_module.so $(B)/toolsearch $(B)/test_engine

deps:
	@sh scripts/deps.sh build

test-deps:
	@sh scripts/deps.sh test

bench-deps:
	@sh scripts/deps.sh bench

fuzz-deps:
	@sh scripts/deps.sh fuzz

versions-deps:
	@sh scripts/deps.sh versions

$(B)/engine/%.o: src/%.c $(ENGINE_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(TS_FLAGS) $(CFLAGS) -c $< -o $@

$(CLI_OBJS): src/cli/ts_cli.h

$(B)/libtoolsearch.a: $(ENGINE_OBJS)
	rm -f $@
	ar rcs $@ $^

$(B)/toolsearch: $(CLI_OBJS) $(B)/libtoolsearch.a
	$(CC) $(CFLAGS) $^ $(LIBS) -o $@

$(B)/test_engine: $(UNIT_SRCS) $(B)/libtoolsearch.a $(ENGINE_HDRS)
	$(CC) $(TS_FLAGS) $(CFLAGS) -DTS_FIXTURES='"t/fixtures"' \
	    $(UNIT_SRCS) $(B)/libtoolsearch.a $(LIBS) -o $@

BENCH_COMMON := bench/ts_bench.c bench/ts_bench.h $(B)/libtoolsearch.a \
                $(ENGINE_HDRS)

$(B)/bench_search: bench/bench_search.c $(BENCH_COMMON)
	$(CC) $(TS_FLAGS) $(CFLAGS) $< bench/ts_bench.c $(B)/libtoolsearch.a \
	    $(LIBS) -o $@

# the engine's heap is counted through wrapped allocation functions
$(B)/bench_engine: bench/bench_engine.c $(B)/engine/cli/ts_cli_conf.o \
		$(BENCH_COMMON)
	$(CC) $(TS_FLAGS) $(CFLAGS) $< bench/ts_bench.c \
	    $(B)/engine/cli/ts_cli_conf.o $(B)/libtoolsearch.a $(LIBS) \
	    -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free -o $@

$(B)/bench_sessions: bench/bench_sessions.c $(B)/engine/cli/ts_cli_conf.o \
		$(BENCH_COMMON)
	$(CC) $(TS_FLAGS) $(CFLAGS) $< bench/ts_bench.c \
	    $(B)/engine/cli/ts_cli_conf.o $(B)/libtoolsearch.a $(LIBS) -o $@

# Debian ships the configured nginx tree in nginx-dev; configure a copy
$(B)/nginx/objs/Makefile: config src/sources \
		ngx_http_toolsearch_module/sources | deps
	rm -rf $(B)/nginx
	mkdir -p $(B)
	cp -a $(NGINX_SRC) $(B)/nginx
	cd $(B)/nginx && ./configure --with-compat \
	    --add-dynamic-module=$(CURDIR) > ../configure.log 2>&1 \
	    || { cat ../configure.log; exit 1; }

$(B)/ngx_http_toolsearch_module.so: $(B)/nginx/objs/Makefile \
		$(GLUE) $(ENGINE_SRCS) $(ENGINE_HDRS)
	$(MAKE) -s -C $(B)/nginx -f objs/Makefile modules
	cp $(B)/nginx/objs/ngx_http_toolsearch_module.so $@

unit: $(B)/test_engine
	$(B)/test_engine

integration: all test-deps
	TOOLSEARCH_NGINX=$(NGINX) $(PYTHON) -m pytest -q t

versions: all versions-deps
	sh scripts/nginx-matrix.sh $(PYTHON)

test: all test-deps
	$(B)/test_engine
	$(PYTHON) -m pytest -q t
	$(MAKE) e2e-run

# the npm installs are kept in build/e2e, build/e2e-agents and
# build/e2e-sdks and redone when a lock changes
e2e-run: all test-deps
	@sh scripts/e2e-deps.sh $(B)/e2e
	@sh scripts/e2e-agents.sh $(B)/e2e-agents
	@sh scripts/e2e-agents.sh $(B)/e2e-sdks t/e2e/openai-sdks
	$(PYTHON) -m pytest -q t/e2e

# the same, then the measurements rewrite the tables of docs/clients.md
e2e: e2e-run
	$(PYTHON) t/e2e/report.py

run: all test-deps
	$(PYTHON) t/demo.py

deb: $(B)/ngx_http_toolsearch_module.so
	@sh scripts/deb.sh $< $(VERSION)-$(DEB_REV) $(B)/deb

search-eval: $(B)/toolsearch
	$(PYTHON) bench/search_eval.py
	$(PYTHON) bench/search_sets.py

bench-search: $(B)/toolsearch $(B)/bench_search
	$(PYTHON) bench/search_bench.py

# engine in process, nginx with wrk against plain proxy_pass and the Lua
# peer, many sessions and tool sets at once, time to first byte with
# gateway search, memory after bursts of gateway searches, what whole
# sessions cost under prompt caching (Messages, then Chat Completions and
# Responses under automatic prefix caching), the search figures, then Chat
# Completions and Responses through the module
bench: all bench-deps $(B)/bench_engine $(B)/bench_search \
       $(B)/bench_sessions
	$(PYTHON) bench/engine_bench.py
	$(PYTHON) bench/proxy_bench.py
	$(PYTHON) bench/sessions_bench.py
	$(PYTHON) bench/ttfb_bench.py
	$(PYTHON) bench/burst_bench.py
	$(PYTHON) bench/cost_bench.py
	$(PYTHON) bench/openai_cost_bench.py
	$(PYTHON) bench/search_bench.py
	$(PYTHON) bench/chat_bench.py

# sanitizers: the engine and its unit tests built with ASan and UBSan
SAN_FLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
             -fno-sanitize-recover=all

$(B)/asan/test_engine: $(UNIT_SRCS) $(ENGINE_SRCS) $(ENGINE_HDRS) | deps
	@mkdir -p $(@D)
	$(ASAN_CC) $(TS_FLAGS) $(SAN_FLAGS) -DTS_FIXTURES='"t/fixtures"' \
	    $(UNIT_SRCS) $(ENGINE_SRCS) $(LIBS) -o $@

asan: $(B)/asan/test_engine
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1 $(B)/asan/test_engine

# libFuzzer targets (fuzz/), each run for FUZZ_TIME seconds from a corpus
# seeded with the fixtures and the test suite's bodies, and the inputs
# that once failed (fuzz/regress/); FUZZ_SEED fixes the random sequence,
# so that a CI pass replays inputs already checked here
FUZZ_TARGETS := request sse search chat responses
FUZZ_OBJS    := $(ENGINE_SRCS:src/%.c=$(B)/fuzz/engine/%.o) $(B)/fuzz/fz.o
FUZZ_CFLAGS  := $(TS_FLAGS) $(SAN_FLAGS) \
                -DFZ_CATALOGUE='"t/search/catalogue.json"'

# kept between runs: only pattern rules name them
.SECONDARY: $(FUZZ_OBJS)

$(B)/fuzz/engine/%.o: src/%.c $(ENGINE_HDRS) | fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(B)/fuzz/fz.o: fuzz/fz.c fuzz/fz.h $(ENGINE_HDRS) | fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ifuzz -fsanitize=fuzzer-no-link -c $< -o $@

$(B)/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fz.h $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ifuzz -fsanitize=fuzzer $< $(FUZZ_OBJS) \
	    $(LIBS) -o $@

$(B)/fuzz/seeds.stamp: fuzz/seeds.py $(wildcard t/fixtures/claude-code/*/*.json)
	@mkdir -p $(@D)
	$(PYTHON) fuzz/seeds.py $(B)/fuzz/corpus
	touch $@

fuzz-build: $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%) $(B)/fuzz/seeds.stamp

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	    echo "fuzz_$$t: $(FUZZ_TIME) s"; \
	    $(B)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_TIME) -timeout=10 \
	        $(if $(FUZZ_SEED),-seed=$(FUZZ_SEED)) \
	        -rss_limit_mb=2048 -dict=fuzz/fuzz.dict -print_final_stats=1 \
	        -artifact_prefix=$(B)/fuzz/$$t- $(B)/fuzz/corpus/$$t \
	        fuzz/regress/$$t \
	        2>$(B)/fuzz/$$t.log || { tail -50 $(B)/fuzz/$$t.log; exit 1; }; \
	    grep -E '^stat::(number_of_executed_units|peak_rss)' \
	        $(B)/fuzz/$$t.log; \
	done

clean:
	rm -rf $(B)
