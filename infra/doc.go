// Package infra groups adapters to external systems and the code that runs them locally.
package infra
