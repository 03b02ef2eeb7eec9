# diffgate: make run (open the app on the demo), make test (everything CI checks).
SHELL := /bin/bash
GO ?= go
# C.UTF-8 is in every glibc: a fresh Debian has no en_US.UTF-8, and perl,
# GTK and others warn about a locale that is not installed.
export LANG := C.UTF-8
export LC_ALL := C.UTF-8

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Debian packages: the desktop build (cgo GL/X11, GTK for native dialogs) ...
DESKTOP_PKGS := gcc pkg-config libgl1-mesa-dev xorg-dev libgtk-3-dev
# ... and what the tests use: Xvfb (smoke), chromium and a font (browser
# tests, driven from Go: no Node), python3 (the seed), hyperfine and time
# (bench), capabilities, xattrs and ACLs (setcap/getfattr/setfacl), git.
TEST_PKGS := xvfb xauth chromium fonts-dejavu-core python3 python3-venv hyperfine time \
	libcap2-bin attr acl git
BIN := bin

.PHONY: all deps test-deps build cli run test unit cross web serve web-test smoke bench lint package clean

all: build cli

# apt-install whichever of $(1) are missing; a no-op when all are present.
define apt_install
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call apt_install,$(DESKTOP_PKGS))

test-deps: deps
	$(call apt_install,$(TEST_PKGS))

build: deps
	$(GO) build -o $(BIN)/diffgate-app .

cli:
	CGO_ENABLED=0 $(GO) build -o $(BIN)/diffgate ./cmd/diffgate

run: build
	./$(BIN)/diffgate-app

# test: vet + format, Go tests with -race, cross-compiles, the real-browser
# web test and the Xvfb smoke test of the desktop binary.
test: test-deps lint unit cross web-test smoke

unit:
	$(GO) test -race -count=1 ./...

cross:
	@for os in darwin windows; do \
		echo "cross-compile $$os (CGO_ENABLED=0): core/... cmd/diffgate"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=amd64 $(GO) build -o /dev/null ./core/... ./cmd/diffgate || exit 1; \
	done
	GOOS=js GOARCH=wasm $(GO) build -o /dev/null ./core/report ./core/policy ./core/diff ./core/snapshot

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# web: the review app for the browser (js/wasm) in build/web, plus the demo
# report (open /?report=demo-report.json). --executable keeps fyne from
# building (and deleting) ./diffgate; it runs in build/ so its wasm/ output
# lands there. migrated_fynedo: the app updates the UI through fyne.Do, and
# Fyne's wasm driver delivers key events on goroutines of their own
# (single-threaded wasm; without the tag every key press logs "Error in Fyne
# call thread" and waits on the main loop, fyne-io/fyne#6103). fyne package
# bumps Build in FyneApp.toml on every run: the file is put back.
WEB_PORT ?= 8765
web:
	rm -rf build/web build/wasm build/diffgate.wasm && mkdir -p build
	@cp -p FyneApp.toml build/.FyneApp.toml.keep
	cd build && $(GO) tool fyne package -os web --release --tags migrated_fynedo --src $(CURDIR) \
		--executable $(CURDIR)/build/diffgate.wasm --icon $(CURDIR)/assets/icon.png --name diffgate; \
	rc=$$?; cmp -s .FyneApp.toml.keep ../FyneApp.toml || cp -p .FyneApp.toml.keep ../FyneApp.toml; exit $$rc
	mv build/wasm build/web
	cp app/review/testdata/demo-report.json build/web/demo-report.json
	@w=build/web/diffgate.wasm; \
	echo "$$w: $$(( $$(stat -c %s $$w) / 1024 )) KiB, gzip -9: $$(( $$(gzip -9 -c $$w | wc -c) / 1024 )) KiB"

serve: web
	@echo "diffgate web: http://127.0.0.1:$(WEB_PORT)/  (demo: http://127.0.0.1:$(WEB_PORT)/?report=demo-report.json)"
	cd build/web && python3 -m http.server $(WEB_PORT) --bind 127.0.0.1

# web-test: the browser tests (tests/web, Go + chromedp) on the system
# chromium; screenshots in build/web-test/.
web-test: web
	DIFFGATE_WEB_DIR=$(CURDIR)/build/web $(GO) test -count=1 -timeout 30m ./tests/web

smoke: build
	DIFFGATE_SMOKE_BIN=$(CURDIR)/$(BIN)/diffgate-app $(GO) test -count=1 -run TestSmoke ./tests/smoke

bench: deps cli
	$(GO) test -run XXX -bench . -benchmem ./core/...
	./tests/bench/bench.sh

package: deps
	$(GO) tool fyne package -os linux --release

clean:
	rm -rf $(BIN) build
