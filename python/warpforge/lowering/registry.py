"""The table from ATen op names (`aten.add.Tensor`) to the functions that lower them."""

LOWERINGS: dict = {}


def register(*names):
    def deco(fn):
        for n in names:
            if n in LOWERINGS:
                raise ValueError(f"{n} registered twice")
            LOWERINGS[n] = fn
        return fn

    return deco
