// Package workflows schedules SQL runs and delivers their results to sinks.
package workflows
