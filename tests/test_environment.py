"""The environment `make` installs is whole: where two pinned wheels ship the same file, the
one the code needs is on disk."""

from __future__ import annotations


def test_aws_cdk_lib_owns_its_cloud_assembly_schema_module() -> None:
    # aws-cdk-lib and aws-cdk.cloud-assembly-schema both ship
    # aws_cdk/cloud_assembly_schema/__init__.py. jsii registers the types of the copy on disk,
    # and aws-cdk-lib's assertions need its own (`Annotations.find_warning` returns
    # aws-cdk-lib.cloud_assembly_schema.MetadataEntry). uv installs wheels in parallel, so the
    # Makefile reinstalls aws-cdk-lib last; without that, either copy may win.
    import aws_cdk.cloud_assembly_schema as schema

    jsii_type = getattr(schema.MetadataEntry, "__jsii_type__", None)
    assert jsii_type == "aws-cdk-lib.cloud_assembly_schema.MetadataEntry", (
        f"aws_cdk/cloud_assembly_schema is aws-cdk.cloud-assembly-schema's copy ({jsii_type}); "
        "run `make install` again (it reinstalls aws-cdk-lib last)"
    )
