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
# (bench), capabilities, xattrs and ACLs (setcap/getfattr/setfacl), git,
# curl (a contained script's connect), groff (the man page test renders it),
# postgresql (the team store tests start a server of their own: initdb and
# pg_ctl from /usr/lib/postgresql/*/bin, internal/pgtest), nodejs and npm (the node profile's npm install, contained).
TEST_PKGS := xvfb xauth chromium fonts-dejavu-core python3 python3-venv hyperfine time \
	libcap2-bin attr acl git curl groff-base postgresql
# Debian 12's nodejs ships no npm: its package npm does. A nodejs from
# elsewhere (NodeSource) that has npm conflicts with Debian's npm package, so
# these are installed only when the npm command is missing.
NODE_PKGS := nodejs npm
BIN := bin

.PHONY: all deps test-deps build cli run test unit cross web serve web-test smoke bench lint package package-test clean

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
	@command -v npm >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(NODE_PKGS) >/dev/null; }

build: deps
	$(GO) build -o $(BIN)/diffgate-app .

cli:
	CGO_ENABLED=0 $(GO) build -o $(BIN)/diffgate ./cmd/diffgate

run: build
	./$(BIN)/diffgate-app

# test: vet + format, Go tests with -race, cross-compiles, the real-browser
# web test and the Xvfb smoke test of the desktop binary.
test: test-deps lint unit cross web-test smoke

# -tags testhooks: the switches tests use to pretend a layer is missing
# (cmd/diffgate/testhooks_testhooks.go); a release build has none.
# -timeout 40m: cmd/diffgate runs real tools contained (pip, npm, go) and
# starts PostgreSQL; on a loaded 2-core machine it passes go test's default
# 10 minutes per package.
unit:
	$(GO) test -race -count=1 -timeout 40m -tags testhooks ./...

cross:
	@for os in darwin windows; do \
		echo "cross-compile $$os (CGO_ENABLED=0): core/... cmd/diffgate"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=amd64 $(GO) build -o /dev/null ./core/... ./cmd/diffgate || exit 1; \
	done
	GOOS=js GOARCH=wasm $(GO) build -o /dev/null ./core/report ./core/policy ./core/diff ./core/snapshot

lint:
	$(GO) vet ./...
	$(GO) vet -tags testhooks ./cmd/diffgate
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# web: the review app for the browser (js/wasm) in build/web, a static site
# (serve it anywhere; make serve). A plain go build: -trimpath, -ldflags
# "-s -w" (no symbol table, no DWARF) and the tags
#   release          Fyne's release mode;
#   migrated_fynedo  the app updates the UI through fyne.Do, and Fyne's wasm
#                    driver delivers key events on goroutines of their own
#                    (single-threaded wasm; without the tag every key press
#                    logs "Error in Fyne call thread" and waits on the main
#                    loop, fyne-io/fyne#6103);
#   no_emoji         leaves out Fyne's colour emoji font, 4.2 MB of the wasm
#                    (app/web's theme has the few symbols the review shows).
# 38.1 MB (11.8 MB gzipped) with fyne package --release, 33.9 MB (8.2 MB)
# now. The page is app/web/page/index.html (9 KB): it shows the download
# (bytes of the total, written into it here), compiling (the browser compiles
# as it downloads) and starting until the app is up, about 1.5 s from
# 127.0.0.1 in headless Chromium (make bench: target 5 s). Text files get a
# gzip -9 copy (NAME.gz, same mtime) that make serve and the tests' server
# send to browsers that accept gzip. The last line gives the sizes
# (tests/web checks them against the budget: see docs/review.md, "In the browser").
WEB_PORT ?= 8765
WEB_TAGS := release,migrated_fynedo,no_emoji
# WEB_OUT is where it goes; WEB_TEST_TAGS are added for the browser tests'
# build (make web-test), empty here: a user's site has no test hooks.
WEB_OUT ?= build/web
WEB_TEST_TAGS ?=
web:
	rm -rf $(WEB_OUT) build/wasm build/diffgate.wasm && mkdir -p $(WEB_OUT)
	GOOS=js GOARCH=wasm CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -tags $(WEB_TAGS)$(WEB_TEST_TAGS) \
		-o $(WEB_OUT)/diffgate.wasm .
	@# window.diffgateRect (app/web/hooks_webtest_js.go) is in the tests' build only.
	@if grep -q diffgateRect $(WEB_OUT)/diffgate.wasm; then hooks=yes; else hooks=no; fi; \
	case "$(WEB_TEST_TAGS)" in *webtest*) want=yes;; *) want=no;; esac; \
	[ $$hooks = $$want ] || { echo "$(WEB_OUT)/diffgate.wasm: test hooks (window.diffgateRect) $$hooks, want $$want"; exit 1; }
	cp "$$($(GO) env GOROOT)/lib/wasm/wasm_exec.js" assets/icon.png app/review/testdata/demo-report.json $(WEB_OUT)/
	sed "s/@WASM_BYTES@/$$(stat -c %s $(WEB_OUT)/diffgate.wasm)/" app/web/page/index.html >$(WEB_OUT)/index.html
	gzip -9 -k -n $(WEB_OUT)/diffgate.wasm $(WEB_OUT)/wasm_exec.js $(WEB_OUT)/index.html $(WEB_OUT)/demo-report.json
	@w=$(WEB_OUT)/diffgate.wasm; \
	echo "$$w: $$(stat -c %s $$w) bytes, gzip -9 $$(stat -c %s $$w.gz) bytes"

# serve: build/web on http://127.0.0.1:$(WEB_PORT) (tools/webserve: the wasm
# as application/wasm, the .gz copies with Content-Encoding: gzip).
serve: web
	$(GO) run ./tools/webserve -dir build/web -addr 127.0.0.1:$(WEB_PORT)

# web-test: the browser tests (tests/web, Go + chromedp) on the system
# chromium, served by internal/webserve on 127.0.0.1 (a free port);
# screenshots in build/web-test/. It tests the site built with the webtest
# tag (window.diffgateRect, the controls' places for the tests to click) in
# build/web-webtest; make web's build/web has no such hook.
web-test:
	$(MAKE) --no-print-directory web WEB_OUT=build/web-webtest WEB_TEST_TAGS=,webtest
	DIFFGATE_WEB_DIR=$(CURDIR)/build/web-webtest $(GO) test -count=1 -timeout 30m ./tests/web

smoke: build
	DIFFGATE_SMOKE_BIN=$(CURDIR)/$(BIN)/diffgate-app $(GO) test -count=1 -run TestSmoke ./tests/smoke

bench: deps cli web
	$(GO) test -run XXX -bench . -benchmem ./core/...
	./tests/bench/bench.sh

# The version a release build stamps in (internal/version; diffgate
# --version and the app's About): git describe of a v* tag
# (v0.1.0, v0.1.0-3-g13456b7), else FyneApp.toml's version and the commit
# (v0.1.0-dev.g13456b7). -dirty when the clone had uncommitted changes.
# Computed once, when make starts (every recipe line sees the same).
# (Paths from the Makefile's own folder: make -f from elsewhere reads it too.)
MAKEFILE_DIR := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))
ifndef VERSION
DESCRIBE := $(shell git -C $(MAKEFILE_DIR) describe --tags --match 'v[0-9]*' --dirty --always 2>/dev/null)
VERSION := $(if $(filter v%,$(DESCRIBE)),$(DESCRIBE),v$(shell sed -n 's/^Version *= *"\(.*\)"/\1/p' $(MAKEFILE_DIR)FyneApp.toml 2>/dev/null)-dev.g$(or $(DESCRIBE),unknown))
endif
ifndef COMMIT
COMMIT := $(shell git -C $(MAKEFILE_DIR) rev-parse HEAD 2>/dev/null)
endif
VERSION_X = -X=github.com/diffgate/diffgate/internal/version.version=$(VERSION) \
	-X=github.com/diffgate/diffgate/internal/version.commit=$(COMMIT)

# package: diffgate.tar.xz (fyne package: the app, its .desktop file and
# icon) and build/diffgate_VERSION_amd64.deb (go tool nfpm, pinned in
# go.mod, packaging/nfpm.yaml): /usr/bin/diffgate (the CLI, static),
# /usr/bin/diffgate-app (the app from the tar.xz, one build), its .desktop
# file and icon, and diffgate(1) generated from the verb table (diffgate
# manpage). fyne package takes -ldflags from GOFLAGS; its --release bumps
# FyneApp.toml's Build, put back afterwards (the clone stays clean).
# fyne package writes the tar.xz with tar -J: xz, not in a minimal Debian.
PACKAGE_PKGS := xz-utils
package: deps
	$(call apt_install,$(PACKAGE_PKGS))
	rm -rf build/pkg && mkdir -p build/pkg/tar
	cp FyneApp.toml build/pkg/FyneApp.toml; \
	GOFLAGS="$$GOFLAGS $(addprefix -ldflags=,$(VERSION_X))" $(GO) tool fyne package -os linux --release; \
	rc=$$?; cp build/pkg/FyneApp.toml FyneApp.toml; exit $$rc
	tar -xJf diffgate.tar.xz -C build/pkg/tar
	find build/pkg/tar -path '*/bin/diffgate' -type f -exec cp {} build/pkg/diffgate-app \;
	test -x build/pkg/diffgate-app
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w $(VERSION_X)" -o build/pkg/diffgate ./cmd/diffgate
	build/pkg/diffgate manpage | gzip -9n >build/pkg/diffgate.1.gz
	rm -f build/diffgate_*.deb
	VERSION=$(VERSION) $(GO) tool nfpm package -f packaging/nfpm.yaml -p deb -t build/
	@ls -l build/diffgate_*.deb

# package-test: the .deb on a fresh Debian 12 (tests/package/check.sh:
# apt install, --version, a gated PASS and FAIL, the app under Xvfb, apt
# remove) in a throwaway chroot made by $(FRESH_MACHINE) from the committed
# HEAD; about 15 minutes (it builds everything there). Not part of make
# test. With FRESH_MACHINE= it runs here instead: as root on a throwaway
# machine only (it installs and removes packages).
FRESH_MACHINE ?= ../shared/tools/fresh-machine.sh
package-test:
	@if [ -n "$(FRESH_MACHINE)" ]; then \
		$(FRESH_MACHINE) . "make package && bash tests/package/check.sh --purge-build-deps"; \
	else \
		$(MAKE) package && bash tests/package/check.sh; \
	fi

clean:
	rm -rf $(BIN) build diffgate.tar.xz
