"""The Flask service: REST API, auth, errors, background jobs and the command line."""
