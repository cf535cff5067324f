// Package query analyzes, authorizes and rewrites SQL for the tenant, and renders result formats.
package query
