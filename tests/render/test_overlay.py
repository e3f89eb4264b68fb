"""PlotOverlay's lifetime: destroy frees every buffer its layers made."""

from gpuviz.render.overlay import PlotOverlay
from tests.widgets.lifetime import GPUBufferLedger


def test_destroy_frees_every_layer_buffer(device):
    with GPUBufferLedger() as ledger:
        overlay = PlotOverlay(device, label="lifetime-overlay")
        overlay.text("label", x=2, y=2)
        overlay.text("title", x=2, y=20, title=True)
        overlay.upload(device.queue, target_size=(64, 48))
        made = ledger.undestroyed()
        overlay.destroy()
    assert any(name.endswith("-glyphs") for name in made) and any(name.endswith("-params") for name in made)
    assert ledger.undestroyed() == []
