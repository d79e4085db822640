"""cc_sources: the source and header files a C++ target is built from, for builds outside Bazel's
C++ toolchain (tests/fuzz compiles the plugin's sources with clang for libFuzzer)."""

def _collect(target, ctx, attrs):
    direct = []
    for attr in attrs:
        # Generated files too (the registry's registered_devices.cc, c_api's trace_fields.inc).
        direct += getattr(ctx.rule.files, attr, [])
    transitive = [dep[_SourcesInfo].files for dep in getattr(ctx.rule.attr, "deps", []) if _SourcesInfo in dep]
    return depset(direct, transitive = transitive)

_SourcesInfo = provider(fields = ["files"])

def _sources_aspect_impl(target, ctx):
    return [_SourcesInfo(files = _collect(target, ctx, ["srcs", "hdrs", "textual_hdrs"]))]

_sources_aspect = aspect(
    implementation = _sources_aspect_impl,
    attr_aspects = ["deps"],
)

def _cc_sources_impl(ctx):
    return [DefaultInfo(files = depset(transitive = [d[_SourcesInfo].files for d in ctx.attr.deps]))]

cc_sources = rule(
    implementation = _cc_sources_impl,
    attrs = {"deps": attr.label_list(aspects = [_sources_aspect])},
    doc = "Every source and header file of `deps` and their transitive deps (srcs, hdrs, textual_hdrs; generated ones included).",
)
