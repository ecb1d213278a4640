"""Components and the registry that holds them (design §2).

A feature adds context by registering a :class:`ContextComponent`; the
assembler never names a component. The built-in components register through
the same :meth:`Registry.register` call a new feature would use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from assembler.design.layers import ALLOWED_PLACEMENTS, LAYER_RANK, PLACEMENT_RANK, Layer, Placement

if TYPE_CHECKING:
    from assembler.design.blocks import BlockRecord
    from assembler.design.context import Context, Profile
    from assembler.design.piece_text import PieceText

Condition = Callable[["Context"], bool]
#: A build returns its text (or, for a long growing text, the pieces it is joined
#: from), or None for nothing to say.
Build = Callable[["Context"], "str | PieceText | None"]


def always(ctx: Context) -> bool:
    """The condition of an unconditional component."""
    return True


class RegistrationError(ValueError):
    """A component could not be registered; the message names it."""


@dataclass(frozen=True)
class ContextComponent:
    """One registered block of context.

    Contracts:
    - ``condition`` is cheap and called on every assembly.
    - ``build`` is pure: same context, same text. It returns ``None`` (or an
      empty string) for "nothing this time". If it raises, the assembly records
      the error on this component's record and goes on with the others.
    - ``order`` sorts within a layer: more stable first. Ties break by name.
    - ``placement`` defaults to the layer's natural place: system for L0 and
      L1, the current user message for L2.
    - ``template`` is a human-readable description of the text ``build``
      produces, shown by the inspector; it is never sent to a model.
    - ``profile_only`` promises that ``condition`` and ``build`` read nothing
      but ``ctx.profile``; the assembler then reuses the record for as long as
      the profile stays the same object (most steps of a session).
    - ``tail`` marks L1 system content that changes on its own schedule (the
      date): breakpoint ③ closes the project part *before* it, so a change in
      the tail loses only the tail and what follows. Ignored outside L1.
    """

    name: str
    layer: Layer
    order: int
    build: Build
    condition: Condition = always
    cacheable: bool = True
    placement: Placement | None = None
    description: str = ""
    condition_text: str = "always"
    template: str = ""
    profile_only: bool = False
    tail: bool = False

    @property
    def where(self) -> Placement:
        return self.placement or ALLOWED_PLACEMENTS[self.layer][0]

    @property
    def sort_key(self) -> tuple[int, int, int, str]:
        """Wire order: placement, then layer, then ``(order, name)``."""
        return (PLACEMENT_RANK[self.where], LAYER_RANK[self.layer], self.order, self.name)


@dataclass
class Registry:
    """An ordered, validated set of components. Tests build their own."""

    _components: dict[str, ContextComponent] = field(default_factory=dict)
    # Sorted views, rebuilt after any change.
    _sorted: dict[Layer | None, list[ContextComponent]] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: The last record of each profile-only component, with the profile it was built for.
    profile_records: dict[str, tuple[Profile, ContextComponent, BlockRecord]] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: What the assembler keeps between steps (its plan, the last records); emptied on
    #: any change to the components, like the sorted views.
    assembly_memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def register(self, component: ContextComponent) -> ContextComponent:
        """Add a component; fail loudly on anything the assembler could not place."""
        name = component.name
        if not isinstance(name, str) or not name.strip():
            raise RegistrationError(f"component name must be a non-empty string, got {name!r}")
        if name in self._components:
            raise RegistrationError(f"component {name!r} is already registered")
        try:
            layer = Layer(component.layer)
        except ValueError:
            raise RegistrationError(
                f"component {name!r}: unknown layer {component.layer!r}; expected one of L0, L1, L2"
            ) from None
        if component.placement is not None:
            try:
                placement = Placement(component.placement)
            except ValueError:
                raise RegistrationError(
                    f"component {name!r}: unknown placement {component.placement!r}"
                ) from None
            if placement not in ALLOWED_PLACEMENTS[layer]:
                allowed = ", ".join(p.value for p in ALLOWED_PLACEMENTS[layer])
                raise RegistrationError(
                    f"component {name!r}: a {layer.value} component cannot land in "
                    f"{placement.value}; {layer.value} blocks go to: {allowed}"
                )
        if not isinstance(component.order, int) or isinstance(component.order, bool):
            raise RegistrationError(
                f"component {name!r}: order must be an int, got {component.order!r}"
            )
        if not callable(component.build) or not callable(component.condition):
            raise RegistrationError(f"component {name!r}: build and condition must be callable")
        component = replace(component, layer=layer)
        self._components[name] = component
        self._sorted.clear()
        self.assembly_memo.clear()
        return component

    def component(
        self,
        name: str,
        layer: Layer | str,
        order: int,
        *,
        condition: Condition = always,
        cacheable: bool = True,
        placement: Placement | None = None,
        condition_text: str = "always",
        template: str = "",
        profile_only: bool = False,
        tail: bool = False,
    ) -> Callable[[Build], Build]:
        """Decorator form: ``@registry.component("x", "L1", 30)`` over a build function."""

        def decorate(build: Build) -> Build:
            self.register(
                ContextComponent(
                    name=name,
                    layer=layer,  # type: ignore[arg-type]  # validated by register()
                    order=order,
                    build=build,
                    condition=condition,
                    cacheable=cacheable,
                    placement=placement,
                    description=(build.__doc__ or "").strip().split("\n")[0],
                    condition_text=condition_text,
                    template=template,
                    profile_only=profile_only,
                    tail=tail,
                )
            )
            return build

        return decorate

    def unregister(self, name: str) -> None:
        if name not in self._components:
            raise KeyError(f"no component named {name!r}")
        del self._components[name]
        self._sorted.clear()
        self.assembly_memo.clear()

    def replace(self, name: str, **changes: object) -> None:
        """Re-register ``name`` with changed fields (used by layouts), revalidated."""
        if name not in self._components:
            raise KeyError(f"no component named {name!r}")
        old = self._components.pop(name)
        self._sorted.clear()
        self.assembly_memo.clear()
        try:
            self.register(replace(old, **changes))  # type: ignore[arg-type]
        except Exception:
            self._components[name] = old
            raise

    def copy(self) -> Registry:
        return Registry(dict(self._components))

    def get(self, name: str) -> ContextComponent:
        return self._components[name]

    def __contains__(self, name: object) -> bool:
        return name in self._components

    def __len__(self) -> int:
        return len(self._components)

    def __iter__(self) -> Iterator[ContextComponent]:
        """Components in wire order."""
        if None not in self._sorted:
            self._sorted[None] = sorted(self._components.values(), key=lambda c: c.sort_key)
        return iter(self._sorted[None])

    def layer(self, layer: Layer) -> list[ContextComponent]:
        """One layer's components, sorted by ``(order, name)``."""
        return list(self.layer_view(layer))

    def layer_view(self, layer: Layer) -> Sequence[ContextComponent]:
        """``layer()`` without the copy. Do not mutate."""
        view = self._sorted.get(layer)
        if view is None:
            view = self._sorted[layer] = sorted(
                (c for c in self._components.values() if c.layer is layer),
                key=lambda c: (c.order, c.name),
            )
        return view

    def extend(self, components: Iterable[ContextComponent]) -> None:
        for c in components:
            self.register(c)
