"""Tests of _ext/static_icons.py: the theme's Font Awesome icons become inline SVG."""

import pytest

from _ext.static_icons import UnknownIcon, drawn_characters, icon_table, inline_icons

# The shape of Font Awesome 6's all.js: each pack's icons, then the call that defines the pack
SCRIPT = ('var p={github:[496,512,[],"f09b","M1 1z"],"file-pdf":[512,512,[],"f1c1","M2 2z"]};'
          'd("fab",p);var p={file:[384,512,[128196],"f15b","M3 3z"]};d("far",p);'
          'var p={file:[384,512,[128196],"f15b","M4 4z"],"magnifying-glass":[512,512,'
          '[128269,"search"],"f002","M5 5z"]};d("fas",p);')
PAGE = ('<head><script defer src="../_static/scripts/fontawesome.js?digest=1"></script>\n'
        '</head><button><i class="fa-solid fa-magnifying-glass"></i></button>'
        '<i class="theme-switch fa-solid fa-file fa-lg" data-mode="light"></i>'
        '<i class="fab fa-github"></i>')


def test_icons_are_read_per_pack():
    table = icon_table(SCRIPT)
    assert table[("fas", "file")] == (384, 512, "M4 4z")
    assert table[("far", "file")] == (384, 512, "M3 3z")
    assert table[("fab", "github")] == (496, 512, "M1 1z")


def test_icons_become_svg_and_the_script_goes():
    page = inline_icons(PAGE, icon_table(SCRIPT))
    assert "<i " not in page and "fontawesome.js" not in page
    assert ('<svg class="svg-inline--fa fa-solid fa-magnifying-glass" aria-hidden="true" '
            'focusable="false" role="img" xmlns="http://www.w3.org/2000/svg" '
            'viewBox="0 0 512 512"><path fill="currentColor" d="M5 5z"></path></svg>') in page
    assert 'class="svg-inline--fa theme-switch fa-solid fa-file fa-lg" data-mode="light"' in page
    assert 'viewBox="0 0 384 512"><path fill="currentColor" d="M4 4z">' in page  # solid
    assert 'd="M1 1z"' in page  # the brand icon


def test_span_icons_drawn_by_the_web_font_become_svg_too():
    page = inline_icons('<button><span class="fa-solid fa-file"></span></button>',
                        icon_table(SCRIPT))
    assert "<span" not in page
    assert 'class="svg-inline--fa fa-solid fa-file"' in page and 'd="M4 4z"' in page


def test_an_unknown_icon_stops_the_build():
    with pytest.raises(UnknownIcon, match="fa-nothing"):
        inline_icons('<i class="fa-solid fa-nothing"></i>', icon_table(SCRIPT))


def test_the_characters_a_stylesheet_draws_are_its_own_rules_not_font_awesomes_classes():
    css = (':root{--pst-icon-bell:"\uf0f3"}/* "\\f11e" */.fa-bell:before{content:"\\f0f3"}'
           '.fa-ring:before,.fa-x::after{content:"\\f70b"}'
           '.onthispage:after{content:"\\f107";font-family:Font Awesome\\ 6 Free}')
    assert drawn_characters(css) == {0xF0F3, 0xF107}
