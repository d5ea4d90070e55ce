"""Ethos-U specifics: architecture configs, the performance model and the bridge to Vela.

Named `ethos_u`, not `ethosu`, so that running Python from the repository root never
shadows Vela's own `ethosu` package.
"""
