# ngx_http_toolsearch_module
#
#   make          the dynamic module, the engine CLI and its unit tests
#   make test     unit tests, then the integration suite (real nginx)
#   make e2e      real clients (Claude Code, the Anthropic SDK, MCP servers
#                 from npm, installed into build/e2e) through the gateway
#   make run      the gateway demo against the bundled emulator
#   make deb      the Debian package libnginx-mod-http-toolsearch
#   make bench    the benchmarks, written into docs/benchmarks.md
#
# Debian bookworm: missing packages are installed when run as root.

CC        ?= cc
CFLAGS    ?= -O2 -g
PYTHON    ?= /usr/bin/python3
NGINX_SRC ?= /usr/share/nginx/src

B         := build
VERSION   := 0.1.0
DEB_REV   := 1
TS_FLAGS  := -std=c99 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -Isrc
LIBS      := -lcjson -lpcre2-8 -lm

ENGINE_SRCS := $(filter-out src/ts_cli%.c,$(sort $(wildcard src/*.c)))
CLI_OBJS    := $(B)/engine/ts_cli.o $(B)/engine/ts_cli_conf.o \
               $(B)/engine/ts_cli_search.o
ENGINE_HDRS := $(wildcard src/*.h)
ENGINE_OBJS := $(ENGINE_SRCS:src/%.c=$(B)/engine/%.o)
UNIT_SRCS   := $(wildcard t/unit/*.c)
GLUE        := $(wildcard ngx_http_toolsearch_*.[ch])

.PHONY: e2e-run all deps test-deps bench-deps test unit integration e2e run clean \
        bench bench-search search-eval deb

all: $(B)/ngx_http_toolsearch_module.so $(B)/toolsearch $(B)/test_engine

deps:
	@sh scripts/deps.sh build

test-deps:
	@sh scripts/deps.sh test

bench-deps:
	@sh scripts/deps.sh bench

$(B)/engine/%.o: src/%.c $(ENGINE_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(TS_FLAGS) $(CFLAGS) -c $< -o $@

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
$(B)/bench_engine: bench/bench_engine.c $(B)/engine/ts_cli_conf.o \
		$(BENCH_COMMON)
	$(CC) $(TS_FLAGS) $(CFLAGS) $< bench/ts_bench.c \
	    $(B)/engine/ts_cli_conf.o $(B)/libtoolsearch.a $(LIBS) \
	    -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free -o $@

# Debian ships the configured nginx tree in nginx-dev; configure a copy
$(B)/nginx/objs/Makefile: config | deps
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
	$(PYTHON) -m pytest -q t

test: all test-deps
	$(B)/test_engine
	$(PYTHON) -m pytest -q t
	$(MAKE) e2e-run

# the npm install is kept in build/e2e and redone when the lock changes
e2e-run: all test-deps
	@sh scripts/e2e-deps.sh $(B)/e2e
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

bench-search: $(B)/toolsearch $(B)/bench_search
	$(PYTHON) bench/search_bench.py

# engine in process, nginx with wrk against plain proxy_pass and the Lua
# peer, time to first byte with gateway search, then the search figures
bench: all bench-deps $(B)/bench_engine $(B)/bench_search
	$(PYTHON) bench/engine_bench.py
	$(PYTHON) bench/proxy_bench.py
	$(PYTHON) bench/ttfb_bench.py
	$(PYTHON) bench/search_bench.py

clean:
	rm -rf $(B)
