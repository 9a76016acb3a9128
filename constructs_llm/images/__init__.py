"""Container images: ``ContainerImage``, the DLC registries per region, image references and the
ECR pull grants. Beside the engines, below the model: an engine names its default image, and a
model binds the image its engine picks."""
