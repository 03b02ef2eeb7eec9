//go:build js && !webtest

package web

// installHooks installs nothing: window.diffgateRect, for the browser
// tests, is only in a build with the webtest tag (hooks_webtest_js.go).
func (h *jsHost) installHooks() {}
