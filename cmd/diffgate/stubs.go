package main

func (c *cli) historyVerb(args []string) error   { return usagef("history: not yet") }
func (c *cli) allowlistVerb(args []string) error { return usagef("allowlist: not yet") }
